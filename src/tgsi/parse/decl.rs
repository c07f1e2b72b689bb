//! Declarations, immediates and properties.

use super::inst::{fast_digits, fast_file, unknown_target};
use super::{Field, PResult, Parser, describe, is_ident, is_ws, names, num, out_of_range, upper};
use crate::diag::{Diagnostic, Span};
use crate::tgsi::ast::*;

/// Where a declaration attribute must appear (Mesa parses them in this fixed order).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Stage {
    Array,
    Local,
    FileAttrs,
    Semantic,
    Stream,
    Interpolation,
    Location,
    CylWrap,
    Invariant,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Array => "ARRAY(n)",
            Stage::Local => "LOCAL",
            Stage::FileAttrs => "the file's attributes",
            Stage::Semantic => "the semantic",
            Stage::Stream => "STREAM(…)",
            Stage::Interpolation => "the interpolation mode",
            Stage::Location => "the sampling location",
            Stage::CylWrap => "CYLWRAP_",
            Stage::Invariant => "INVARIANT",
        }
    }
}

/// A `[a..b]`, `[a]` or `[]` declaration bracket.
struct Range {
    first: u32,
    last: u32,
    span: Span,
    empty: bool,
}

impl Parser<'_> {
    pub(super) fn declaration(&mut self, start: usize) -> PResult<Declaration> {
        self.require_ws("`DCL`")?;
        // The common files written as Mesa does, `FILE[`, without upper-casing the name.
        let fast = fast_file(self.src, self.pos);
        let mut buf = [0u8; 64];
        let (w, span) = match fast {
            Some((_, bracket)) => (&[][..], Span::new(self.pos, bracket)),
            None => self.keyword(&mut buf),
        };
        if let Some((_, bracket)) = fast {
            self.pos = bracket;
        }
        let Some(file) = fast.map(|(file, _)| file).or_else(|| names::file(w)) else {
            let text = String::from_utf8_lossy(&self.src[span.range()]).into_owned();
            let mut d = Diagnostic::error(
                "E0004",
                if text.is_empty() { Span::new(span.start as usize, span.start as usize + 1) } else { span },
                if text.is_empty() {
                    format!("expected a register file after `DCL`, found {}", describe(self.src, self.pos))
                } else {
                    format!("unknown register file `{text}`")
                },
            )
            .with_label("not a register file");
            if let Some(s) = names::closest(&text, File::ALL.iter().map(|f| f.name())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d.into());
        };
        let discards_first = matches!(
            (self.processor, file),
            (Processor::Geom | Processor::TessEval, File::Input) | (Processor::TessCtrl, File::Input | File::Output)
        );
        self.skip_ws();
        if self.peek() == b'[' {
            self.pos += 1;
        } else {
            self.expect(b'[', "E0005", &format!("after `{}`", file.name()))?;
        }
        let first = self.dcl_range(discards_first)?;
        let save = self.pos;
        self.skip_ws();
        let (dimension, range) = if self.peek() == b'[' {
            self.pos += 1;
            let second = self.dcl_range(false)?;
            if discards_first {
                (None, second)
            } else {
                if first.first != first.last || first.empty {
                    return Err(Diagnostic::error(
                        "E0034",
                        first.span,
                        "a declaration's dimension must be a single index",
                    )
                    .with_label("a range here")
                    .with_note("Mesa would keep only the first index")
                    .into());
                }
                (Some(first.first), second)
            }
        } else {
            self.pos = save;
            (None, first)
        };
        if range.empty && range.last == u32::MAX {
            return Err(self.empty_brackets(range.span));
        }
        let mut decl = Declaration {
            file,
            dimension,
            first: range.first,
            last: range.last,
            usage_mask: WriteMask::XYZW,
            array_id: None,
            local: false,
            semantic: None,
            resource: None,
            interpolation: None,
            location: None,
            cylindrical_wrap: WriteMask(0),
            invariant: false,
            span: Span::default(),
        };
        decl.usage_mask = self.optional_write_mask()?;
        // Without a `,` next (white space and line breaks aside) there are no attributes, and
        // files without resource attributes keep `resource: None`: the usual `DCL TEMP[0..3]`
        // skips the attribute parser.
        let is_resource_file =
            matches!(file, File::Image | File::SamplerView | File::Buffer | File::Memory | File::LegacyResource);
        let mut next = self.pos;
        while self.src.get(next).is_some_and(|&c| is_ws(c)) {
            next += 1;
        }
        if is_resource_file || self.src.get(next) == Some(&b',') {
            self.declaration_attributes(&mut decl)?;
        }
        if file == File::LegacyImmediateArray {
            let values = self.immediate_array(&decl, start)?;
            decl.resource = Some(ResourceDecl::ImmediateArray { values });
        }
        decl.span = Span::new(start, self.pos);
        Ok(decl)
    }

    fn empty_brackets(&self, span: Span) -> Box<Diagnostic> {
        let note = match self.processor {
            Processor::Geom => {
                "in a geometry shader `[]` means all input vertices; set `PROPERTY GS_INPUT_PRIMITIVE` first"
            }
            _ => "`[]` is only allowed where the size is implied (geometry and tessellation shaders)",
        };
        Box::new(
            Diagnostic::error("E0033", span, "empty brackets without an implied size")
                .with_label("write an index or a range")
                .with_note(note),
        )
    }

    /// After `[`: `a`, `a..b` or nothing, then `]`.
    fn dcl_range(&mut self, lenient_empty: bool) -> PResult<Range> {
        let start = self.pos - 1;
        // What Mesa prints: `a]` or `a..b]` without blanks, in range and in order.
        if let Some((first, after)) = fast_digits(self.src, self.pos)
            && first <= Field::U16.max() as u32
        {
            let (last, end) = match self.src.get(after..after + 2) {
                Some([b']', _]) => (Some(first), after + 1),
                Some(b"..") => match fast_digits(self.src, after + 2) {
                    Some((last, at)) if self.src.get(at) == Some(&b']') => (Some(last), at + 1),
                    _ => (None, 0),
                },
                _ if self.src.get(after) == Some(&b']') => (Some(first), after + 1),
                _ => (None, 0),
            };
            if let Some(last) = last
                && first <= last
                && last <= Field::U16.max() as u32
            {
                self.pos = end;
                return Ok(Range { first, last, span: Span::new(start, end), empty: false });
            }
        }
        self.skip_ws();
        if self.peek() == b']' {
            self.pos += 1;
            let span = Span::new(start, self.pos);
            if self.implied_size == 0 {
                if lenient_empty {
                    return Ok(Range { first: 0, last: 0, span, empty: true });
                }
                return Ok(Range { first: 0, last: u32::MAX, span, empty: true });
            }
            return Ok(Range { first: 0, last: self.implied_size - 1, span, empty: true });
        }
        let first = self.bounded_uint("declaration index", Field::U16)?;
        self.skip_ws();
        let mut last = first;
        if self.peek() == b'.' {
            if self.peek_at(1) != b'.' {
                return Err(self
                    .error_here("E0035", "expected `..` in a declaration range")
                    .with_label("expected `..`")
                    .into());
            }
            self.pos += 2;
            self.skip_ws();
            last = self.bounded_uint("end of the declaration range", Field::U16)?;
            self.skip_ws();
        }
        if self.peek() != b']' {
            return Err(self
                .error_here("E0035", format!("expected `]` or `..`, found {}", describe(self.src, self.pos)))
                .with_label("expected `]` or `..`")
                .into());
        }
        self.pos += 1;
        let span = Span::new(start, self.pos);
        if last < first {
            return Err(Diagnostic::error("E0034", span, format!("declaration range {first}..{last} runs backwards"))
                .with_label("the end is below the start")
                .with_help(format!("write `[{last}..{first}]`"))
                .into());
        }
        Ok(Range { first, last, span, empty: false })
    }

    fn declaration_attributes(&mut self, decl: &mut Declaration) -> PResult<()> {
        let file = decl.file;
        let mut stage: Option<Stage> = None;
        let mut target: Option<TextureTarget> = None;
        let mut types: Vec<(ReturnType, Span)> = Vec::new();
        let (mut raw, mut writable, mut atomic) = (false, false, false);
        let mut format = Format(0);
        let mut memory_kind = None;
        loop {
            let save = self.pos;
            self.skip_ws();
            if self.peek() != b',' {
                self.pos = save;
                break;
            }
            self.pos += 1;
            self.skip_ws();
            let mut buf = [0u8; 64];
            let (w, span) = self.keyword(&mut buf);
            if w.is_empty() {
                return Err(self
                    .error_here(
                        "E0015",
                        format!("expected a declaration attribute after `,`, found {}", describe(self.src, self.pos)),
                    )
                    .with_label("expected an attribute")
                    .into());
            }
            let is_resource_file =
                matches!(file, File::Image | File::SamplerView | File::Buffer | File::Memory | File::LegacyResource);
            // Classify the word.
            let (new_stage, action): (Stage, Attr) = if w == b"ARRAY" {
                (Stage::Array, Attr::Array)
            } else if w == b"LOCAL" && !is_resource_file {
                (Stage::Local, Attr::Local)
            } else if is_resource_file {
                if let Some(t) = names::texture_target(w).filter(|_| {
                    matches!(file, File::Image | File::SamplerView | File::LegacyResource) && target.is_none()
                }) {
                    (Stage::FileAttrs, Attr::Target(t))
                } else if let Some(t) = names::return_type(w)
                    .filter(|_| matches!(file, File::SamplerView | File::LegacyResource) && target.is_some())
                {
                    (Stage::FileAttrs, Attr::ReturnType(t))
                } else if w == b"RAW" && matches!(file, File::Image | File::LegacyResource) {
                    (Stage::FileAttrs, Attr::Raw)
                } else if w == b"WR" && matches!(file, File::Image | File::LegacyResource) {
                    (Stage::FileAttrs, Attr::Writable)
                } else if let Some(f) = names::format(w).filter(|_| file == File::Image) {
                    (Stage::FileAttrs, Attr::Format(f))
                } else if w == b"ATOMIC" && file == File::Buffer {
                    (Stage::FileAttrs, Attr::Atomic)
                } else if let Some(k) = names::memory_kind(w).filter(|_| file == File::Memory) {
                    (Stage::FileAttrs, Attr::MemoryKind(k))
                } else if w.starts_with(b"PIPE_FORMAT_") && matches!(file, File::Image | File::LegacyResource) {
                    return Err(unknown_format(self.src, span));
                } else {
                    match self.generic_attribute(w, decl, stage) {
                        Ok(x) => x,
                        Err(e) if matches!(file, File::SamplerView | File::LegacyResource) && target.is_some() => {
                            let _ = e;
                            let text = String::from_utf8_lossy(&self.src[span.range()]).into_owned();
                            let mut d = Diagnostic::error("E0016", span, format!("unknown return type `{text}`"))
                                .with_label("expected UNORM, SNORM, SINT, UINT or FLOAT");
                            if let Some(s) =
                                names::closest(&text, ["UNORM", "SNORM", "SINT", "UINT", "FLOAT"].into_iter())
                            {
                                d = d.with_help(format!("did you mean `{s}`?"));
                            }
                            return Err(d.into());
                        }
                        Err(e) => return Err(e),
                    }
                }
            } else {
                self.generic_attribute(w, decl, stage)?
            };
            if let Some(current) = stage
                && (new_stage < current || (new_stage == current && new_stage != Stage::FileAttrs))
            {
                let message = if new_stage == current {
                    format!("{} is given twice", new_stage.name())
                } else {
                    format!("{} must come before {}", new_stage.name(), current.name())
                };
                return Err(Diagnostic::error("E0054", span, message)
                    .with_label("out of place")
                    .with_note("declaration attributes go in the order ARRAY, LOCAL, semantic, STREAM, interpolation, location, INVARIANT")
                    .into());
            }
            if matches!(file, File::Image | File::SamplerView | File::LegacyResource)
                && new_stage == Stage::FileAttrs
                && target.is_none()
                && !matches!(action, Attr::Target(_))
            {
                return Err(unknown_target(self.src, span));
            }
            stage = Some(new_stage);
            match action {
                Attr::Array => {
                    self.skip_ws();
                    self.expect(b'(', "E0032", "after `ARRAY`")?;
                    self.skip_ws();
                    decl.array_id = Some(self.bounded_uint("array id", Field::U10)?);
                    self.skip_ws();
                    self.expect(b')', "E0032", "to close `ARRAY(`")?;
                }
                Attr::Local => decl.local = true,
                Attr::Target(t) => target = Some(t),
                Attr::ReturnType(t) => {
                    if types.len() == 4 {
                        return Err(Diagnostic::error("E0016", span, "more than four return types")
                            .with_label("a fifth type")
                            .into());
                    }
                    types.push((t, span));
                }
                Attr::Raw => raw = true,
                Attr::Writable => writable = true,
                Attr::Format(f) => {
                    if format != Format(0) {
                        return Err(Diagnostic::error("E0017", span, "the image format is given twice")
                            .with_label("second format")
                            .with_note("Mesa would keep only the last one")
                            .into());
                    }
                    format = f;
                }
                Attr::Atomic => atomic = true,
                Attr::MemoryKind(k) => memory_kind = Some(k),
                Attr::Semantic(name) => {
                    let index = self.semantic_index()?;
                    decl.semantic = Some(Semantic { name, index, stream: [0; 4] });
                }
                Attr::Stream => {
                    let stream = self.stream_values()?;
                    match decl.semantic.as_mut() {
                        Some(s) => s.stream = stream,
                        None => {
                            return Err(Diagnostic::error("E0054", span, "`STREAM(…)` needs a semantic before it")
                                .with_label("no semantic")
                                .with_help("write e.g. `DCL OUT[0], GENERIC[0], STREAM(1, 0, 0, 0)`")
                                .into());
                        }
                    }
                }
                Attr::Interpolation(i) => decl.interpolation = Some(i),
                Attr::Location(l) => decl.location = (l != Location::Center).then_some(l),
                Attr::CylWrap(mask) => decl.cylindrical_wrap = mask,
                Attr::Invariant => decl.invariant = true,
            }
        }
        decl.resource = match file {
            File::Image => {
                Some(ResourceDecl::Image { target: target.unwrap_or(TextureTarget::Buffer), format, writable, raw })
            }
            File::SamplerView => Some(ResourceDecl::SamplerView {
                target: target.unwrap_or(TextureTarget::Buffer),
                return_types: self.return_types(&types, target.is_some(), decl)?,
            }),
            File::LegacyResource if !types.is_empty() => {
                if raw || writable {
                    return Err(Diagnostic::error("E0016", types[0].1, "`RES` has both return types and RAW/WR")
                        .with_label("mixed legacy forms")
                        .with_note("Mesa 7.11 – 8.0 `RES` took return types; 9.0 – 11.1 `RES` took RAW and WR")
                        .into());
                }
                Some(ResourceDecl::SamplerView {
                    target: target.unwrap_or(TextureTarget::Buffer),
                    return_types: self.return_types(&types, true, decl)?,
                })
            }
            File::LegacyResource => {
                Some(ResourceDecl::Image { target: target.unwrap_or(TextureTarget::Buffer), format, writable, raw })
            }
            File::Buffer => Some(ResourceDecl::Buffer { atomic }),
            File::Memory => Some(ResourceDecl::Memory { kind: memory_kind.unwrap_or(MemoryKind::Global) }),
            _ => None,
        };
        Ok(())
    }

    fn return_types(
        &self,
        types: &[(ReturnType, Span)],
        has_target: bool,
        decl: &Declaration,
    ) -> PResult<[ReturnType; 4]> {
        match types {
            [] if has_target => Err(self
                .error_here(
                    "E0016",
                    format!(
                        "expected `,` and a return type after the texture target, found {}",
                        describe(self.src, self.pos)
                    ),
                )
                .with_label("expected e.g. `, FLOAT`")
                .into()),
            [] => Ok([ReturnType::Unorm; 4]),
            [(t, _)] => Ok([*t; 4]),
            [(a, _), (b, _), (c, _), (d, _)] => Ok([*a, *b, *c, *d]),
            [(t, _), rest @ ..] if rest.iter().all(|(r, _)| r == t) => Ok([*t; 4]),
            _ => {
                let span = types[0].1.join(types[types.len() - 1].1);
                let _ = decl;
                Err(Diagnostic::error("E0016", span, format!("{} different return types", types.len()))
                    .with_label("give one type for all channels or four, one per channel")
                    .with_note("Mesa would silently use the first type for all four channels")
                    .into())
            }
        }
    }

    /// Semantic, STREAM, interpolation, location, CYLWRAP_, INVARIANT.
    fn generic_attribute(&mut self, w: &[u8], decl: &Declaration, stage: Option<Stage>) -> PResult<(Stage, Attr)> {
        let span = Span::new(self.pos - w.len(), self.pos);
        let semantic_allowed = stage.is_none_or(|s| s < Stage::Semantic);
        if let Some(name) = names::semantic(w).filter(|_| semantic_allowed || !is_interp_word(w)) {
            return Ok((Stage::Semantic, Attr::Semantic(name)));
        }
        if w == b"STREAM" {
            return Ok((Stage::Stream, Attr::Stream));
        }
        if let Some(i) = names::interpolation(w) {
            return Ok((Stage::Interpolation, Attr::Interpolation(i)));
        }
        if let Some(l) = names::location(w) {
            return Ok((Stage::Location, Attr::Location(l)));
        }
        if let Some(letters) = w.strip_prefix(b"CYLWRAP_") {
            let mut mask = 0u8;
            let mut last = -1i32;
            for &c in letters {
                let bit = match c {
                    b'X' => 0,
                    b'Y' => 1,
                    b'Z' => 2,
                    b'W' => 3,
                    _ => -1,
                };
                if bit <= last {
                    return Err(Diagnostic::error("E0015", span, "malformed `CYLWRAP_` attribute")
                        .with_label("expected `CYLWRAP_` and components in the order X, Y, Z, W")
                        .into());
                }
                mask |= 1 << bit;
                last = bit;
            }
            if mask != 0 {
                return Ok((Stage::CylWrap, Attr::CylWrap(WriteMask(mask))));
            }
        }
        if w == b"INVARIANT" {
            return Ok((Stage::Invariant, Attr::Invariant));
        }
        let text = String::from_utf8_lossy(&self.src[span.range()]).into_owned();
        let _ = decl;
        let candidates = SemanticName::ALL.iter().map(|s| s.name()).chain([
            "CONSTANT",
            "LINEAR",
            "PERSPECTIVE",
            "COLOR",
            "CENTER",
            "CENTROID",
            "SAMPLE",
            "INVARIANT",
            "ARRAY",
            "LOCAL",
            "STREAM",
        ]);
        let mut d = Diagnostic::error("E0015", span, format!("unknown declaration attribute `{text}`"))
            .with_label("expected a semantic, interpolation mode, sampling location or `INVARIANT`");
        if matches!(decl.file, File::Image | File::SamplerView | File::Buffer | File::Memory | File::LegacyResource) {
            d = d.with_note(match decl.file {
                File::Image => "IMAGE takes a texture target, then RAW, WR and a PIPE_FORMAT_* name",
                File::SamplerView => "SVIEW takes a texture target and one or four return types",
                File::Buffer => "BUFFER takes `ATOMIC`",
                File::Memory => "MEMORY takes GLOBAL, SHARED, PRIVATE or INPUT",
                _ => "RES takes a texture target, then return types or RAW and WR",
            });
        } else if let Some(s) = names::closest(&text, candidates) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(d.into())
    }

    fn semantic_index(&mut self) -> PResult<u32> {
        let save = self.pos;
        self.skip_ws();
        if self.peek() != b'[' {
            self.pos = save;
            return Ok(0);
        }
        self.pos += 1;
        self.skip_ws();
        let index = self.bounded_uint("semantic index", Field::U16)?;
        self.skip_ws();
        self.expect(b']', "E0006", "to close the semantic index")?;
        Ok(index)
    }

    fn stream_values(&mut self) -> PResult<[u8; 4]> {
        self.skip_ws();
        self.expect(b'(', "E0032", "after `STREAM`")?;
        let mut stream = [0u8; 4];
        for (i, s) in stream.iter_mut().enumerate() {
            self.skip_ws();
            if i > 0 {
                self.expect(b',', "E0009", "between STREAM values")?;
                self.skip_ws();
            }
            *s = self.bounded_uint("stream number", Field::U2)? as u8;
        }
        self.skip_ws();
        self.expect(b')', "E0032", "after the four STREAM values")?;
        Ok(stream)
    }

    /// Legacy `{ {f, f, f, f}, … }` after `DCL IMMX[a..b]`.
    fn immediate_array(&mut self, decl: &Declaration, start: usize) -> PResult<Vec<[u32; 4]>> {
        self.skip_ws();
        self.expect(b'{', "E0021", "to start the immediate array")?;
        let mut values = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                b'}' => {
                    self.pos += 1;
                    break;
                }
                b',' if !values.is_empty() => {
                    self.pos += 1;
                }
                b'{' => {
                    self.pos += 1;
                    let mut group = [0u32; 4];
                    for (i, word) in group.iter_mut().enumerate() {
                        self.skip_ws();
                        if i > 0 {
                            self.expect(b',', "E0009", "between immediate values")?;
                            self.skip_ws();
                        }
                        *word = self.flt32_value()?;
                    }
                    self.skip_ws();
                    self.expect(b'}', "E0021", "after four values")?;
                    values.push(group);
                }
                _ => {
                    return Err(self
                        .error_here(
                            "E0021",
                            format!(
                                "expected `{{` or `}}` in the immediate array, found {}",
                                describe(self.src, self.pos)
                            ),
                        )
                        .with_label("expected `{`")
                        .into());
                }
            }
        }
        let declared = u64::from(decl.last) - u64::from(decl.first) + 1;
        if values.len() as u64 != declared {
            return Err(Diagnostic::error(
                "E0050",
                Span::new(start, self.pos),
                format!(
                    "`IMMX[{}..{}]` declares {declared} elements but {} are given",
                    decl.first,
                    decl.last,
                    values.len()
                ),
            )
            .with_label("element count differs from the range")
            .into());
        }
        Ok(values)
    }

    // -----------------------------------------------------------------------------------------
    // Immediates

    pub(super) fn immediate(&mut self, start: usize) -> PResult<Immediate> {
        let mut indexed = false;
        if self.peek() == b'[' {
            indexed = true;
            self.pos += 1;
            self.skip_ws();
            let (n, span) = self.uint("the immediate's index")?;
            if n != u64::from(self.immediates) {
                self.diags.push(
                    Diagnostic::error("E0023", span, format!("immediate index {n} is out of order"))
                        .with_label(format!("this is immediate number {}", self.immediates))
                        .with_note("immediates are numbered from 0 in the order they appear"),
                );
            }
            self.skip_ws();
            self.expect(b']', "E0006", "to close the immediate index")?;
        }
        self.require_ws("`IMM`")?;
        let mut buf = [0u8; 64];
        let (w, span) = self.keyword(&mut buf);
        let Some(ty) = names::immediate_type(w) else {
            let text = String::from_utf8_lossy(&self.src[span.range()]).into_owned();
            let mut d = Diagnostic::error(
                "E0020",
                if text.is_empty() { Span::new(span.start as usize, span.start as usize + 1) } else { span },
                if text.is_empty() {
                    format!("expected an immediate type, found {}", describe(self.src, self.pos))
                } else {
                    format!("unknown immediate type `{text}`")
                },
            )
            .with_label("expected FLT32, UINT32, INT32, FLT64, UINT64 or INT64");
            if let Some(s) = names::closest(&text, ["FLT32", "UINT32", "INT32", "FLT64", "UINT64", "INT64"].into_iter())
            {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d.into());
        };
        self.skip_ws();
        let open = self.pos;
        self.expect(b'{', "E0021", "before the immediate's values")?;
        let count = if ty.is_64bit() { 2 } else { 4 };
        let mut words = [0u32; 4];
        for i in 0..count {
            self.skip_ws();
            if i > 0 {
                if self.peek() == b'}' {
                    return Err(self
                        .error_here("E0050", format!("{} immediates have {count} values, found {i}", ty.name()))
                        .with_label("too few values")
                        .into());
                }
                self.expect(b',', "E0009", "between immediate values")?;
                self.skip_ws();
            }
            match ty {
                ImmediateType::Flt32 => words[i] = self.flt32_value()?,
                ImmediateType::Uint32 => words[i] = self.uint32_value()?,
                ImmediateType::Int32 => words[i] = self.int32_value()?,
                ImmediateType::Flt64 => {
                    let bits = self.flt64_value()?;
                    words[2 * i] = bits as u32;
                    words[2 * i + 1] = (bits >> 32) as u32;
                }
                ImmediateType::Uint64 | ImmediateType::Int64 => {
                    let bits = self.int64_value(ty == ImmediateType::Int64)?;
                    words[2 * i] = bits as u32;
                    words[2 * i + 1] = (bits >> 32) as u32;
                }
            }
        }
        let spaced = self.skip_ws();
        if self.peek() == b',' {
            return Err(self
                .error_here("E0050", format!("{} immediates have {count} values", ty.name()))
                .with_label("too many values")
                .into());
        }
        self.expect(b'}', "E0021", "after the immediate's values")?;
        let _ = open;
        self.immediates += 1;
        Ok(Immediate { ty, words, indexed, legacy_spaced_braces: spaced && !indexed, span: Span::new(start, self.pos) })
    }

    fn value_end_check(&self, start: usize) -> PResult<()> {
        if is_ident(self.peek()) || self.peek() == b'.' {
            let end = self.pos + 1;
            return Err(Diagnostic::error(
                "E0022",
                Span::new(start, end.min(self.src.len())),
                format!("malformed number `{}`", String::from_utf8_lossy(&self.src[start..end.min(self.src.len())])),
            )
            .with_label("not a number")
            .into());
        }
        Ok(())
    }

    fn expected_number(&self, kind: &str) -> Box<Diagnostic> {
        Box::new(
            self.error_here("E0022", format!("expected {kind}, found {}", describe(self.src, self.pos)))
                .with_label(format!("expected {kind}")),
        )
    }

    /// A FLT32 value: C `strtof` syntax; `0x` with exactly eight hex digits is a bit pattern.
    pub(super) fn flt32_value(&mut self) -> PResult<u32> {
        let start = self.pos;
        // What Mesa prints (`%10.4f`) in one pass; the general scan and conversion otherwise.
        if let Some((bits, len)) = num::short_decimal_f32(&self.src[start..]) {
            self.pos += len;
            self.value_end_check(start)?;
            return Ok(bits);
        }
        let len = num::scan_c_float(&self.src[start..]);
        if len == 0 {
            return Err(self.expected_number("a floating-point number"));
        }
        let text = &self.src[start..start + len];
        self.pos += len;
        self.value_end_check(start)?;
        if len == 10 && text[0] == b'0' && (text[1] | 0x20) == b'x' && text[2..].iter().all(u8::is_ascii_hexdigit) {
            let hex = std::str::from_utf8(&text[2..]).unwrap_or("0");
            return Ok(u32::from_str_radix(hex, 16).unwrap_or(0));
        }
        num::c_float_to_f32_bits(text).ok_or_else(|| self.expected_number("a floating-point number"))
    }

    fn flt64_value(&mut self) -> PResult<u64> {
        let start = self.pos;
        let len = num::scan_c_float(&self.src[start..]);
        if len == 0 {
            return Err(self.expected_number("a floating-point number"));
        }
        self.pos += len;
        self.value_end_check(start)?;
        num::c_float_to_f64_bits(&self.src[start..start + len])
            .ok_or_else(|| self.expected_number("a floating-point number"))
    }

    fn uint32_value(&mut self) -> PResult<u32> {
        let start = self.pos;
        if !self.peek().is_ascii_digit() {
            return Err(self.expected_number("an unsigned integer"));
        }
        let (value, span) = self.uint("an unsigned integer")?;
        self.value_end_check(start)?;
        if value > u64::from(u32::MAX) {
            self.diags.push(out_of_range(span, "UINT32 value", value, Field::U32));
        }
        Ok(value as u32)
    }

    fn int32_value(&mut self) -> PResult<u32> {
        let start = self.pos;
        let negative = self.peek() == b'-';
        if matches!(self.peek(), b'-' | b'+') {
            self.pos += 1;
        }
        if !self.peek().is_ascii_digit() {
            self.pos = start;
            return Err(self.expected_number("an integer"));
        }
        let (magnitude, digits) = self.uint("an integer")?;
        self.value_end_check(start)?;
        let limit = if negative { 1u64 << 31 } else { (1u64 << 31) - 1 };
        if magnitude > limit {
            let span = Span::new(start, digits.end as usize);
            let mut d = Diagnostic::error("E0024", span, "INT32 value is out of range")
                .with_label("INT32 values range from -2147483648 to 2147483647");
            if magnitude != u64::MAX {
                let m = magnitude as u32;
                let stored = if negative { m.wrapping_neg() } else { m } as i32;
                d = d.with_note(format!("Mesa would silently store {stored}"));
            }
            self.diags.push(d);
            return Ok(0);
        }
        Ok(if negative { (magnitude as i64).wrapping_neg() as u32 } else { magnitude as u32 })
    }

    fn int64_value(&mut self, signed: bool) -> PResult<u64> {
        let start = self.pos;
        let scanned = num::scan_c_integer(&self.src[start..]);
        if scanned.len == 0 {
            return Err(self.expected_number("an integer"));
        }
        self.pos += scanned.len;
        self.value_end_check(start)?;
        let span = Span::new(start, self.pos);
        let name = if signed { "INT64" } else { "UINT64" };
        let fail = |note: String| {
            Diagnostic::error("E0024", span, format!("{name} value is out of range"))
                .with_label(if signed {
                    "INT64 values range from -9223372036854775808 to 9223372036854775807"
                } else {
                    "UINT64 values range from 0 to 18446744073709551615"
                })
                .with_note(note)
        };
        let Some(magnitude) = scanned.magnitude else {
            let saturated = if !signed {
                "18446744073709551615".to_string()
            } else if scanned.negative {
                i64::MIN.to_string()
            } else {
                i64::MAX.to_string()
            };
            self.diags.push(fail(format!("Mesa would silently store {saturated}")));
            return Ok(0);
        };
        if signed {
            let limit = if scanned.negative { 1u64 << 63 } else { (1u64 << 63) - 1 };
            if magnitude > limit {
                let saturated = if scanned.negative { i64::MIN } else { i64::MAX };
                self.diags.push(fail(format!("Mesa would silently store {saturated}")));
                return Ok(0);
            }
            return Ok(if scanned.negative { magnitude.wrapping_neg() } else { magnitude });
        }
        if scanned.negative && magnitude != 0 {
            self.diags.push(fail(format!("Mesa would silently store {}", magnitude.wrapping_neg())));
            return Ok(0);
        }
        Ok(magnitude)
    }

    // -----------------------------------------------------------------------------------------
    // Properties

    pub(super) fn property(&mut self, start: usize) -> PResult<Property> {
        self.require_ws("`PROPERTY`")?;
        let (word, span) = self.word();
        let mut buf = [0u8; 64];
        let name = upper(word, &mut buf).and_then(names::property);
        let Some(name) = name else {
            let text = String::from_utf8_lossy(word).into_owned();
            if text.is_empty() {
                return Err(self
                    .error_here("E0018", format!("expected a property name, found {}", describe(self.src, self.pos)))
                    .with_label("expected a name")
                    .into());
            }
            let mut d = Diagnostic::error("E0018", span, format!("unknown property `{text}`"))
                .with_label("not a TGSI property");
            if let Some(s) = names::closest(&text, PropertyName::ALL.iter().map(|p| p.name())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d.into());
        };
        self.skip_ws();
        let value_start = self.pos;
        let bad_value = |this: &Self, expected: &str, choices: &[&str]| -> Box<Diagnostic> {
            let end = value_start + this.word_at(value_start).len().max(1);
            let text = describe(this.src, value_start);
            let mut d = Diagnostic::error(
                "E0019",
                Span::new(value_start, end.min(this.src.len().max(value_start))),
                format!("invalid value {text} for `{}`", name.name()),
            )
            .with_label(format!("expected {expected}"));
            let word = String::from_utf8_lossy(this.word_at(value_start)).into_owned();
            if let Some(s) = names::closest(&word, choices.iter().copied()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            Box::new(d)
        };
        let value = match name {
            PropertyName::GsInputPrimitive | PropertyName::GsOutputPrimitive => {
                let (w, _) = self.keyword(&mut buf);
                let choices: Vec<&str> = Primitive::ALL.iter().map(|p| p.name()).collect();
                PropertyValue::Primitive(
                    names::primitive(w)
                        .ok_or_else(|| bad_value(self, "a primitive name such as `TRIANGLES`", &choices))?,
                )
            }
            PropertyName::FsCoordOrigin => {
                let (w, _) = self.keyword(&mut buf);
                PropertyValue::CoordOrigin(
                    names::coord_origin(w).ok_or_else(|| {
                        bad_value(self, "`UPPER_LEFT` or `LOWER_LEFT`", &["UPPER_LEFT", "LOWER_LEFT"])
                    })?,
                )
            }
            PropertyName::FsCoordPixelCenter => {
                let (w, _) = self.keyword(&mut buf);
                PropertyValue::PixelCenter(
                    names::pixel_center(w)
                        .ok_or_else(|| bad_value(self, "`HALF_INTEGER` or `INTEGER`", &["HALF_INTEGER", "INTEGER"]))?,
                )
            }
            PropertyName::NextShader => {
                let (w, _) = self.keyword(&mut buf);
                let choices = ["VERT", "TESS_CTRL", "TESS_EVAL", "GEOM", "FRAG", "COMP", "TASK", "MESH"];
                PropertyValue::Shader(
                    names::processor(w).ok_or_else(|| bad_value(self, "a shader type such as `FRAG`", &choices))?,
                )
            }
            _ => {
                // Mesa prints values with %d, so accept a sign to read its output back.
                let negative = self.peek() == b'-';
                if negative {
                    self.pos += 1;
                }
                if !self.peek().is_ascii_digit() {
                    self.pos = value_start;
                    return Err(bad_value(self, "an integer", &[]));
                }
                let (magnitude, digits) = self.uint("property value")?;
                let span = Span::new(value_start, digits.end as usize);
                let value = if negative {
                    if magnitude > 1u64 << 31 {
                        self.diags.push(
                            Diagnostic::error("E0024", span, "property value is out of range")
                                .with_label("values range from -2147483648 to 4294967295"),
                        );
                    }
                    (magnitude as u32).wrapping_neg()
                } else {
                    if magnitude > u64::from(u32::MAX) {
                        self.diags.push(out_of_range(span, "property value", magnitude, Field::U32));
                    }
                    magnitude as u32
                };
                PropertyValue::Uint(value)
            }
        };
        if let (Processor::Geom, PropertyName::GsInputPrimitive, PropertyValue::Primitive(p)) =
            (self.processor, name, value)
        {
            self.implied_size = p.vertex_count();
        }
        Ok(Property { name, value, span: Span::new(start, self.pos) })
    }
}

/// An unknown `PIPE_FORMAT_*` name.
pub(super) fn unknown_format(src: &[u8], span: Span) -> Box<Diagnostic> {
    let text = String::from_utf8_lossy(&src[span.range()]).into_owned();
    let mut d =
        Diagnostic::error("E0017", span, format!("unknown image format `{text}`")).with_label("not a Gallium format");
    let bare = text.get(12..).unwrap_or("");
    if let Some(s) = names::closest(bare, crate::tgsi::formats::FORMATS.iter().copied()) {
        d = d.with_help(format!("did you mean `PIPE_FORMAT_{s}`?"));
    }
    Box::new(d)
}

fn is_interp_word(w: &[u8]) -> bool {
    names::interpolation(w).is_some()
}

/// What an attribute word stands for.
enum Attr {
    Array,
    Local,
    Target(TextureTarget),
    ReturnType(ReturnType),
    Raw,
    Writable,
    Format(Format),
    Atomic,
    MemoryKind(MemoryKind),
    Semantic(SemanticName),
    Stream,
    Interpolation(Interpolation),
    Location(Location),
    CylWrap(WriteMask),
    Invariant,
}
