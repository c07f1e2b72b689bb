//! Instructions and their operands.

use super::{
    FOLD, Field, PResult, Parser, describe, ident_len, is_ident, is_ws, load8, low_bytes, names, out_of_range, pack,
    upper,
};
use crate::diag::{Diagnostic, Span};
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::{self, FlowRole, Opcode, Status};

/// Opcode suffixes, longest first.
const SUFFIXES: [(&[u8], Saturate, bool); 4] = [
    (b"_SAT_PRECISE", Saturate::ZeroOne, true),
    (b"_SATNV", Saturate::MinusPlusOne, false),
    (b"_PRECISE", Saturate::None, true),
    (b"_SAT", Saturate::ZeroOne, false),
];

fn component(c: u8) -> Option<Component> {
    match c | 0x20 {
        b'x' => Some(Component::X),
        b'y' => Some(Component::Y),
        b'z' => Some(Component::Z),
        b'w' => Some(Component::W),
        _ => None,
    }
}

/// One `.` group after a source register: up to four items, each an optional `-` and one of
/// `x y z w 0 1`.
struct SwizzleGroup {
    items: [ExtendedSwizzle; 4],
    count: usize,
    /// Only plain component letters.
    plain: bool,
}

impl Parser<'_> {
    /// Parses an instruction and appends it to `statements`.
    pub(super) fn instruction(&mut self, start: usize, statements: &mut Vec<Statement>) -> PResult<()> {
        let predicate = if self.peek() == b'(' { Some(self.predicate()?) } else { None };
        let (opcode, saturate, precise, opcode_span) = self.opcode()?;
        let info = opcode.info();
        let mut opcode = opcode;
        if opcode == Opcode::Endloop && self.loops.last() == Some(&true) {
            opcode = Opcode::EndloopLegacy;
        }
        match info.flow {
            Some(FlowRole::LoopBegin) => self.loops.push(opcode == Opcode::Loop),
            Some(FlowRole::LoopEnd) => {
                self.loops.pop();
            }
            _ => {}
        }
        let (nd, mut ns) = (usize::from(info.num_dst), usize::from(info.num_src));
        if matches!(opcode, Opcode::Emit | Opcode::Endprim) && self.rest_of_line_is_blank() {
            // Before Mesa 10.3 EMIT and ENDPRIM took no stream operand (stream 0).
            ns = 0;
        }
        let total = nd + ns + usize::from(info.has_texture_target);
        if total > 0 {
            if !is_ws(self.peek()) {
                return Err(self
                    .error_here(
                        "E0002",
                        format!("expected white space after `{}`, found {}", info.name, describe(self.src, self.pos)),
                    )
                    .with_label("expected white space before the first operand")
                    .into());
            }
            self.skip_ws();
        }
        // Pushed as a skeleton and filled in place, taken back on an error: assembling it on the
        // stack and pushing it when complete copied the whole statement (344 bytes) twice, once
        // into the `Statement` and once into the vector.
        statements.push(Statement::Instruction(Instruction {
            opcode,
            saturate,
            precise,
            predicate,
            dst: DstOperands::new(),
            src: SrcOperands::new(),
            texture_target: None,
            texture_offsets: Vec::new(),
            memory: MemoryItems::default(),
            label: None,
            span: Span::default(),
            opcode_span,
        }));
        let Some(Statement::Instruction(inst)) = statements.last_mut() else {
            unreachable!("an instruction was just pushed")
        };
        let result = self.instruction_operands(inst, start, nd, ns, total);
        if result.is_err() {
            statements.pop();
        }
        result
    }

    /// The operands and trailing items of `inst` (opcode already read), up to the end of the
    /// statement.
    #[inline(always)]
    fn instruction_operands(
        &mut self,
        inst: &mut Instruction,
        start: usize,
        nd: usize,
        ns: usize,
        total: usize,
    ) -> PResult<()> {
        let opcode = inst.opcode;
        let mut last_end = self.pos;
        for i in 0..total {
            if i > 0 {
                self.operand_comma(last_end, opcode, i)?;
            }
            // Operands Mesa prints are read by the fast paths; anything else (and every error)
            // by the general ones.
            // Each path pushes its own operand: a value that may come from either would be
            // assembled in memory and copied again (an operand is 56–72 bytes).
            if i < nd {
                if let Some(operand) = self.fast_dst_operand() {
                    inst.dst.push(operand);
                } else {
                    let operand = self.dst_operand()?;
                    inst.dst.push(operand);
                }
            } else if i < nd + ns {
                if let Some(operand) = self.fast_src_operand() {
                    inst.src.push(operand);
                } else {
                    let operand = self.src_operand()?;
                    inst.src.push(operand);
                }
            } else {
                inst.texture_target = Some(self.texture_target()?);
            }
            last_end = self.pos;
        }
        if opcode == Opcode::Load
            && inst.src.get(1).is_some_and(|s| matches!(s.register.file, File::LegacyResource | File::SamplerView))
        {
            // Mesa 7.11 – 8.0: LOAD was the sampler-view fetch (today's SAMPLE_I).
            inst.opcode = Opcode::LoadLegacy;
        }
        self.trailing_items(inst, last_end)?;
        inst.span = Span::new(start, self.pos);
        self.end_of_statement("instruction", opcode)
    }

    /// Whether only blanks (no line break needed) remain before the end of the line or text.
    fn rest_of_line_is_blank(&self) -> bool {
        self.src[self.pos..].iter().find(|&&c| !matches!(c, b' ' | b'\t')).is_none_or(|&c| matches!(c, b'\n' | b'\r'))
    }

    /// After a statement: white space or the end of the text must follow.
    #[inline(always)]
    fn end_of_statement(&mut self, what: &str, opcode: Opcode) -> PResult<()> {
        if self.at_end() || is_ws(self.peek()) {
            return Ok(());
        }
        Err(self.unexpected_after_statement(what, opcode))
    }

    #[cold]
    fn unexpected_after_statement(&self, what: &str, opcode: Opcode) -> Box<Diagnostic> {
        let mut d = self
            .error_here("E0053", format!("unexpected {} after the {what}", describe(self.src, self.pos)))
            .with_label("expected white space or a line break here");
        if self.peek() == b',' {
            let info = opcode.info();
            d = d.with_note(format!("`{}` takes {}", info.name, operand_summary(opcode)));
        }
        Box::new(d)
    }

    fn operand_comma(&mut self, last_end: usize, opcode: Opcode, index: usize) -> PResult<()> {
        // What Mesa prints: `, ` and the next operand.
        if self.src.get(self.pos..self.pos + 2) == Some(b", ") && !is_ws(self.peek_at(2)) {
            self.pos += 2;
            return Ok(());
        }
        self.skip_ws();
        if self.peek() == b',' {
            self.pos += 1;
            self.skip_ws();
            return Ok(());
        }
        let _ = index;
        // Describe what follows the operand on its own line.
        let found = describe(self.src, if self.src[last_end..self.pos].contains(&b'\n') { last_end } else { self.pos });
        Err(Diagnostic::error("E0009", Span::at(last_end), format!("expected `,` and another operand, found {found}"))
            .with_label("expected `,` here")
            .with_note(format!("`{}` takes {}", opcode.name(), operand_summary(opcode)))
            .into())
    }

    fn opcode(&mut self) -> PResult<(Opcode, Saturate, bool, Span)> {
        // A mnemonic of up to seven bytes without suffix (almost every one): measured and looked
        // up from one word, without reading it again for the key.
        let at = self.pos;
        let head = load8(self.src, at);
        let len = ident_len(head);
        if (1..8).contains(&len)
            && let Some(op) = names::opcode_by_key([head & low_bytes(len) & FOLD, 0])
        {
            debug_assert_eq!(names::key_at(self.src, at, len), Some([head & low_bytes(len) & FOLD, 0]));
            self.pos = at + len;
            return Ok((op, Saturate::None, false, Span::new(at, at + len)));
        }
        let (word, span) = self.word();
        if word.is_empty() {
            let mut d = self
                .error_here(
                    "E0003",
                    format!(
                        "expected an instruction, `DCL`, `IMM` or `PROPERTY`, found {}",
                        describe(self.src, self.pos)
                    ),
                )
                .with_label("expected a statement");
            if matches!(self.peek(), b'#' | b';' | b'/') {
                d = d.with_note("TGSI text has no comments");
            }
            return Err(d.into());
        }
        let unknown = || {
            let text = String::from_utf8_lossy(word);
            let mut d =
                Diagnostic::error("E0003", span, format!("unknown opcode `{text}`")).with_label("not a TGSI opcode");
            if let Some(op) = opcodes::closest(&text) {
                d = d.with_help(format!("did you mean `{}`?", op.name()));
            }
            Box::new(d)
        };
        // The key is read from the text (the word is usually followed by enough bytes for
        // whole-word loads).
        if let Some(op) = names::key_at(self.src, span.start as usize, word.len()).and_then(names::opcode_by_key) {
            return Ok((op, Saturate::None, false, span));
        }
        let mut buf = [0u8; 64];
        let Some(up) = upper(word, &mut buf) else { return Err(unknown()) };
        for (suffix, saturate, precise) in SUFFIXES {
            if let Some(stem) = up.strip_suffix(suffix)
                && let Some(op) = lookup(stem)
            {
                return Ok((op, saturate, precise, span));
            }
        }
        if let Some(stem) = up.strip_suffix(b"_PRECISE_SAT")
            && let Some(op) = lookup(stem)
        {
            let text = String::from_utf8_lossy(word);
            return Err(Diagnostic::error("E0043", span, format!("`{text}`: `_SAT` must come before `_PRECISE`"))
                .with_label("suffixes in the wrong order")
                .with_help(format!("write `{}_SAT_PRECISE`", op.name()))
                .into());
        }
        Err(unknown())
    }

    /// Legacy predicate `(PRED[n].xyzw)` / `(!PRED[n])` before the opcode.
    fn predicate(&mut self) -> PResult<Predicate> {
        self.pos += 1;
        self.skip_ws();
        let negate = self.peek() == b'!';
        if negate {
            self.pos += 1;
            self.skip_ws();
        }
        let (word, span) = self.word();
        let mut buf = [0u8; 64];
        if upper(word, &mut buf) != Some(b"PRED") {
            return Err(Diagnostic::error("E0041", span, "expected a `PRED` register in the instruction predicate")
                .with_label("expected `PRED[n]`")
                .into());
        }
        self.skip_ws();
        self.expect(b'[', "E0005", "after `PRED`")?;
        self.skip_ws();
        let index = self.bounded_uint("predicate register index", Field::I16)?;
        self.skip_ws();
        self.expect(b']', "E0006", "to close the predicate register")?;
        let save = self.pos;
        self.skip_ws();
        let mut swizzle = IDENTITY_SWIZZLE;
        if self.peek() == b'.' {
            self.pos += 1;
            self.skip_ws();
            let group = self.swizzle_group()?;
            swizzle = self.plain_swizzle(&group, self.pos)?;
        } else {
            self.pos = save;
        }
        self.skip_ws();
        self.expect(b')', "E0041", "to close the predicate")?;
        self.skip_ws();
        Ok(Predicate { negate, index, swizzle })
    }

    fn texture_target(&mut self) -> PResult<TextureTarget> {
        let mut buf = [0u8; 64];
        let (w, span) = self.keyword(&mut buf);
        names::texture_target(w).ok_or_else(|| unknown_target(self.src, span))
    }

    /// Texture offsets, memory items and a branch label, in that order.
    fn trailing_items(&mut self, inst: &mut Instruction, mut last_end: usize) -> PResult<()> {
        if matches!(self.src.get(self.pos), None | Some(b'\n')) {
            return Ok(()); // the usual case: the line ends right after the operands
        }
        let info = inst.opcode.info();
        loop {
            let save = self.pos;
            self.skip_ws();
            match self.peek() {
                b',' => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.skip_ws();
                    let word = self.word_at(self.pos);
                    let mut buf = [0u8; 64];
                    let is_register = upper(word, &mut buf).and_then(names::file).is_some()
                        && self.src[self.pos + word.len()..].iter().find(|&&c| !is_ws(c)) == Some(&b'[');
                    if info.has_texture_offsets && is_register && inst.memory == MemoryItems::default() {
                        if inst.texture_offsets.len() == 4 {
                            return Err(Diagnostic::error(
                                "E0031",
                                Span::new(comma, self.pos + word.len()),
                                "more than four texture offsets",
                            )
                            .with_label("a fifth offset")
                            .into());
                        }
                        let offset = self.texture_offset()?;
                        inst.texture_offsets.push(offset);
                    } else if info.has_memory_items && !word.is_empty() {
                        self.memory_item(&mut inst.memory)?;
                    } else {
                        let mut d = Diagnostic::error(
                            "E0053",
                            Span::new(comma, comma + 1),
                            format!("`{}` takes no further operands", info.name),
                        )
                        .with_label("unexpected `,`")
                        .with_note(format!(
                            "`{}` takes {}",
                            info.name,
                            operand_summary(inst.opcode)
                        ));
                        if info.has_memory_items {
                            d = d.with_note("memory qualifiers, texture targets and formats may follow");
                        }
                        return Err(d.into());
                    }
                    last_end = self.pos;
                }
                b':' => {
                    let colon = self.pos;
                    self.pos += 1;
                    self.skip_ws();
                    if !(info.has_branch_label || matches!(inst.opcode, Opcode::Bgnsub | Opcode::EndloopLegacy)) {
                        return Err(Diagnostic::error(
                            "E0039",
                            Span::new(colon, colon + 1),
                            format!("`{}` does not take a branch label", info.name),
                        )
                        .with_label("unexpected `:`")
                        .with_note("branch labels `:N` are allowed on IF, UIF, ELSE, BGNLOOP, ENDLOOP, CAL and BGNSUB")
                        .into());
                    }
                    if !self.peek().is_ascii_digit() {
                        return Err(self
                            .error_here(
                                "E0038",
                                format!("expected a label number after `:`, found {}", describe(self.src, self.pos)),
                            )
                            .with_label("expected an instruction number")
                            .into());
                    }
                    inst.label = Some(self.bounded_uint("branch label", Field::U24)?);
                    return Ok(());
                }
                _ => {
                    self.pos = save;
                    let _ = last_end;
                    return Ok(());
                }
            }
        }
    }

    fn memory_item(&mut self, memory: &mut MemoryItems) -> PResult<()> {
        let mut buf = [0u8; 64];
        let (w, span) = self.keyword(&mut buf);
        if let Some(bit) = names::memory_qualifier(w) {
            memory.qualifiers |= bit;
        } else if let Some(target) = names::texture_target(w) {
            if memory.texture != TextureTarget::Buffer {
                return Err(Diagnostic::error("E0037", span, "the texture target is given twice")
                    .with_label("second target")
                    .with_note("Mesa would keep only the last one")
                    .into());
            }
            memory.texture = target;
        } else if let Some(format) = names::format(w) {
            if memory.format != Format(0) {
                return Err(Diagnostic::error("E0037", span, "the format is given twice")
                    .with_label("second format")
                    .with_note("Mesa would keep only the last one")
                    .into());
            }
            memory.format = format;
        } else if w.starts_with(b"PIPE_FORMAT_") {
            return Err(super::decl::unknown_format(self.src, span));
        } else {
            let text = String::from_utf8_lossy(&self.src[span.range()]);
            return Err(Diagnostic::error("E0037", span, format!("unknown memory item `{text}`"))
                .with_label("expected a memory qualifier, texture target or format")
                .with_note(
                    "qualifiers are COHERENT, RESTRICT, VOLATILE and STREAM_CACHE_POLICY; formats are written PIPE_FORMAT_*",
                )
                .into());
        }
        Ok(())
    }

    fn texture_offset(&mut self) -> PResult<TextureOffset> {
        let start = self.pos;
        let mut buf = [0u8; 64];
        let (w, span) = self.keyword(&mut buf);
        let file = names::file(w).ok_or_else(|| unknown_file(self.src, span))?;
        self.skip_ws();
        self.expect(b'[', "E0005", "after the register file")?;
        let index = self.bracket()?;
        if index.indirect.is_some() {
            return Err(Diagnostic::error(
                "E0030",
                Span::new(start, self.pos),
                "indirect texture offsets are not supported",
            )
            .with_label("indirect offset")
            .with_note("Mesa would silently keep only the constant part of the index")
            .into());
        }
        let save = self.pos;
        self.skip_ws();
        let mut swizzle = [Component::X; 3];
        if self.peek() == b'.' {
            self.pos += 1;
            self.skip_ws();
            let letters_start = self.pos;
            let word = self.word_at(self.pos);
            let letters: Option<Vec<Component>> = word.iter().map(|&c| component(c)).collect();
            match letters {
                Some(l) if l.len() == 3 => swizzle = [l[0], l[1], l[2]],
                _ => {
                    return Err(Diagnostic::error(
                        "E0010",
                        Span::new(letters_start, letters_start + word.len().max(1)),
                        "a texture offset takes exactly three swizzle letters",
                    )
                    .with_label("expected three of `x`, `y`, `z`, `w`")
                    .into());
                }
            }
            self.pos += 3;
        } else {
            self.pos = save;
        }
        Ok(TextureOffset { file, index: index.value, swizzle, span: Span::new(start, self.pos) })
    }

    // -----------------------------------------------------------------------------------------
    // Operands

    /// `FILE[index]` or `FILE[dim][index]`.
    fn register(&mut self) -> PResult<Register> {
        if let Some(r) = self.fast_register() {
            return Ok(r);
        }
        self.register_general()
    }

    /// The common shape `FILE[n]` / `FILE[n][m]` without white space, indirection or ArrayIDs,
    /// read with a few byte comparisons. `None` (cursor unchanged) for anything else.
    #[inline(always)]
    fn fast_register(&mut self) -> Option<Register> {
        let src = self.src;
        let (file, bracket) = fast_file(src, self.pos)?;
        let (first, mut i) = fast_index(src, bracket + 1)?;
        let mut r = Register { file, dimension: None, index: Index::direct(first) };
        if src.get(i) == Some(&b'[') {
            let (second, j) = fast_index(src, i + 1)?;
            r.dimension = Some(r.index);
            r.index = Index::direct(second);
            i = j;
        }
        // White space followed by `[` (a spaced second bracket) is for the general path.
        if src.get(i).is_some_and(|&c| is_ws(c)) && src.get(self.next_non_ws(i)) == Some(&b'[') {
            return None;
        }
        self.pos = i;
        Some(r)
    }

    fn register_general(&mut self) -> PResult<Register> {
        let (w, span) = self.word();
        let file = names::file_any_case(w).ok_or_else(|| unknown_file(self.src, span))?;
        self.skip_ws();
        if self.peek() == b'[' {
            self.pos += 1;
        } else {
            self.expect(b'[', "E0005", &format!("after `{}`", file.name()))?;
        }
        let first = self.bracket()?;
        let save = self.pos;
        self.skip_ws();
        if self.peek() == b'[' {
            self.pos += 1;
            let second = self.bracket()?;
            return Ok(Register { file, dimension: Some(first), index: second });
        }
        self.pos = save;
        Ok(Register { file, dimension: None, index: first })
    }

    /// The inside of `[…]` (the `[` already consumed), the `]` and an optional `(arrayid)`.
    fn bracket(&mut self) -> PResult<Index> {
        self.skip_ws();
        let c = self.peek();
        let mut index = if c.is_ascii_digit() {
            let value = self.bounded_uint("register index", Field::I16)?;
            Index::direct(value as i32)
        } else if c.is_ascii_alphabetic() {
            self.indirect()?
        } else if c == b'-' && self.peek_at(1).is_ascii_digit() {
            return Err(self
                .error_here("E0045", "register indices cannot be negative")
                .with_label("negative index")
                .with_note("a negative offset is written with an address register: `TEMP[ADDR[0].x-1]`")
                .into());
        } else {
            return Err(self
                .error_here("E0007", format!("expected a register index, found {}", describe(self.src, self.pos)))
                .with_label("expected a number or an address register")
                .into());
        };
        self.skip_ws();
        self.expect(b']', "E0006", "to close the register index")?;
        if self.peek() == b'(' {
            self.pos += 1;
            self.skip_ws();
            index.array_id = self.bounded_uint("array id", Field::U10)?;
            self.skip_ws();
            self.expect(b')', "E0032", "to close the array id")?;
        }
        Ok(index)
    }

    /// `FILE[n].c+k` inside a bracket.
    fn indirect(&mut self) -> PResult<Index> {
        let (w, span) = self.word();
        let file = names::file_any_case(w).ok_or_else(|| unknown_file(self.src, span))?;
        self.skip_ws();
        if self.peek() == b'[' {
            self.pos += 1;
        } else {
            self.expect(b'[', "E0005", &format!("after `{}`", file.name()))?;
        }
        self.skip_ws();
        let index = self.bounded_uint("address register index", Field::I16)? as i32;
        self.skip_ws();
        self.expect(b']', "E0006", "to close the address register index")?;
        self.skip_ws();
        let mut component_ = Component::X;
        if self.peek() == b'.' {
            self.pos += 1;
            self.skip_ws();
            let letter_at = self.pos;
            let word = self.word_at(self.pos);
            match (word.len(), word.first().copied().and_then(component)) {
                (1, Some(c)) => component_ = c,
                _ => {
                    return Err(Diagnostic::error(
                        "E0047",
                        Span::new(letter_at, letter_at + word.len().max(1)),
                        "expected one address component `x`, `y`, `z` or `w`",
                    )
                    .with_label("expected a single component letter")
                    .into());
                }
            }
            self.pos += 1;
            self.skip_ws();
        }
        let mut value: i32 = 0;
        if matches!(self.peek(), b'+' | b'-') {
            let sign_at = self.pos;
            let negative = self.peek() == b'-';
            self.pos += 1;
            if !self.peek().is_ascii_digit() {
                return Err(self
                    .error_here("E0007", format!("expected digits right after `{}`", if negative { '-' } else { '+' }))
                    .with_label("the offset's sign must touch its digits")
                    .into());
            }
            let (magnitude, digits_span) = self.uint("address offset")?;
            let limit = if negative { 32768 } else { 32767 };
            if magnitude > limit {
                let span = Span::new(sign_at, digits_span.end as usize);
                let wrapped = if negative { magnitude.wrapping_neg() } else { magnitude };
                let mut d = out_of_range(span, "address offset", magnitude, Field::I16);
                d.primary.message = format!("offsets range from -32768 to {}", 32767);
                if magnitude != u64::MAX {
                    d.notes = vec![format!(
                        "note: Mesa stores it in a 16-bit signed field and would silently turn it into {}",
                        wrapped as u16 as i16
                    )];
                }
                self.diags.push(d);
            } else {
                value = if negative { -(magnitude as i32) } else { magnitude as i32 };
            }
        }
        Ok(Index { value, indirect: Some(Indirect { file, index, component: component_ }), array_id: 0 })
    }

    fn dst_operand(&mut self) -> PResult<DstOperand> {
        let start = self.pos;
        if matches!(self.peek(), b'-' | b'|') {
            return Err(self
                .error_here("E0055", "destination operands take no `-` or `|…|` modifiers")
                .with_label("modifier on a destination")
                .into());
        }
        let register = self.register()?;
        let mut modulate = None;
        if self.peek() == b'_' {
            let (w, span) = self.word();
            let mut buf = [0u8; 64];
            modulate = Some(match upper(w, &mut buf) {
                Some(b"_1X") => Modulate::X1,
                Some(b"_2X") => Modulate::X2,
                Some(b"_4X") => Modulate::X4,
                Some(b"_8X") => Modulate::X8,
                Some(b"_D2") => Modulate::D2,
                Some(b"_D4") => Modulate::D4,
                Some(b"_D8") => Modulate::D8,
                _ => {
                    return Err(Diagnostic::error("E0056", span, "unknown destination modifier")
                        .with_label("expected one of `_1X`, `_2X`, `_4X`, `_8X`, `_D2`, `_D4`, `_D8`")
                        .into());
                }
            });
        }
        let write_mask = self.optional_write_mask()?;
        Ok(DstOperand { register, write_mask, modulate, span: Span::new(start, self.pos) })
    }

    /// A destination `R` or `R.mask` ([`Self::fast_register`], a valid mask right after it) followed
    /// by `,`, white space not before a `.`, or the end: what Mesa prints. `None` (cursor
    /// unchanged) for anything else.
    #[inline(always)]
    fn fast_dst_operand(&mut self) -> Option<DstOperand> {
        let start = self.pos;
        let register = self.fast_register()?;
        let src = self.src;
        let at = self.pos;
        let (write_mask, end) = match src.get(at) {
            Some(&b'.') => match fast_write_mask(&src[at + 1..]) {
                Some((mask, letters)) => (WriteMask(mask), at + 1 + letters),
                None => {
                    self.pos = start;
                    return None;
                }
            },
            Some(&b',') | None => (WriteMask::XYZW, at),
            Some(&c) if is_ws(c) && src.get(self.next_non_ws(at)) != Some(&b'.') => (WriteMask::XYZW, at),
            Some(_) => {
                self.pos = start;
                return None;
            }
        };
        self.pos = end;
        Some(DstOperand { register, write_mask, modulate: None, span: Span::new(start, end) })
    }

    /// `ows . ows xyzw` (letters in order) or nothing (all four).
    pub(super) fn optional_write_mask(&mut self) -> PResult<WriteMask> {
        if self.peek() == b'.'
            && let Some((mask, letters)) = fast_write_mask(&self.src[self.pos + 1..])
        {
            self.pos += 1 + letters;
            return Ok(WriteMask(mask));
        }
        let save = self.pos;
        if self.peek() != b'.' && !is_ws(self.peek()) {
            return Ok(WriteMask::XYZW);
        }
        self.skip_ws();
        if self.peek() != b'.' {
            self.pos = save;
            return Ok(WriteMask::XYZW);
        }
        self.pos += 1;
        self.skip_ws();
        let start = self.pos;
        let word = self.word_at(start);
        let mut mask = 0u8;
        let mut last: i32 = -1;
        for (i, &c) in word.iter().enumerate() {
            match component(c) {
                Some(comp) if comp as i32 > last => {
                    mask |= 1 << comp as u8;
                    last = comp as i32;
                }
                Some(_) => {
                    return Err(Diagnostic::error(
                        "E0049",
                        Span::new(start + i, start + i + 1),
                        "write mask letters out of order",
                    )
                    .with_label("repeated or out of order")
                    .with_help("write the components in the order `x`, `y`, `z`, `w`, each at most once")
                    .into());
                }
                None => {
                    return Err(Diagnostic::error(
                        "E0011",
                        Span::new(start + i, start + i + 1),
                        format!("expected a write mask, found {}", describe(self.src, start + i)),
                    )
                    .with_label("expected `x`, `y`, `z` or `w`")
                    .into());
                }
            }
        }
        if word.is_empty() {
            return Err(self
                .error_here("E0011", format!("expected a write mask after `.`, found {}", describe(self.src, self.pos)))
                .with_label("expected `x`, `y`, `z` or `w`")
                .into());
        }
        self.pos += word.len();
        Ok(WriteMask(mask))
    }

    fn src_operand(&mut self) -> PResult<SrcOperand> {
        let start = self.pos;
        let mut legacy = LegacySourceModifiers {
            outer_negate: false,
            scale2: false,
            bias: false,
            complement: false,
            extended_swizzle: None,
        };
        let mut negate_before_abs = false;
        // Legacy prefixes, outermost first: -( | 2*( ( 1-( then the plain -.
        if self.peek() == b'-' {
            let after = self.next_non_ws(self.pos + 1);
            match self.src.get(after) {
                Some(b'(') => {
                    legacy.outer_negate = true;
                    self.pos = after + 1;
                    self.skip_ws();
                }
                Some(b'|') => {
                    negate_before_abs = true;
                    self.pos = after;
                }
                _ => {}
            }
        }
        let absolute = self.peek() == b'|';
        if absolute {
            self.pos += 1;
            self.skip_ws();
        }
        if self.peek() == b'2' && self.src.get(self.next_non_ws(self.pos + 1)) == Some(&b'*') {
            self.pos = self.next_non_ws(self.pos + 1) + 1;
            self.skip_ws();
            self.expect(b'(', "E0032", "after `2*`")?;
            self.skip_ws();
            legacy.scale2 = true;
        }
        if self.peek() == b'(' {
            self.pos += 1;
            self.skip_ws();
            legacy.bias = true;
        }
        if self.peek() == b'1' && self.src.get(self.next_non_ws(self.pos + 1)) == Some(&b'-') {
            self.pos = self.next_non_ws(self.pos + 1) + 1;
            self.skip_ws();
            self.expect(b'(', "E0032", "after `1-`")?;
            self.skip_ws();
            legacy.complement = true;
        }
        let mut negate = false;
        if self.peek() == b'-' {
            negate = true;
            self.pos += 1;
            self.skip_ws();
        }
        if matches!(self.peek(), b'-' | b'|') {
            return Err(self
                .error_here("E0055", "modifiers must be written `-|x|`")
                .with_label("unexpected modifier")
                .with_note("a source takes at most one `-` and one `|…|`, the `-` first")
                .into());
        }
        let register = self.register()?;
        let mut swizzle = IDENTITY_SWIZZLE;
        // Fast path: `.xyzw`-style swizzle right after the register, no legacy modifiers.
        if self.peek() == b'.'
            && !legacy.complement
            && !legacy.bias
            && !legacy.scale2
            && !legacy.outer_negate
            && let Some(&[a, b, c, d]) = self.src.get(self.pos + 1..self.pos + 5)
            && let Some(swizzle) = four_letters(a, b, c, d)
            && !self.src.get(self.pos + 5).is_some_and(|&n| is_ident(n) || n == b'.' || n == b'-')
            && self.src.get(self.next_non_ws(self.pos + 5)) != Some(&b'.')
        {
            self.pos += 5;
            if absolute {
                self.skip_ws();
                self.expect(b'|', "E0012", "to close the absolute value")?;
            }
            let (negate, legacy) = if absolute && negate {
                let legacy = LegacySourceModifiers { outer_negate: negate_before_abs, ..legacy };
                (true, Some(Box::new(legacy)))
            } else {
                (negate || negate_before_abs, None)
            };
            return Ok(SrcOperand { register, swizzle, negate, absolute, legacy, span: Span::new(start, self.pos) });
        }
        let save = self.pos;
        self.skip_ws();
        if self.peek() == b'.' {
            self.pos += 1;
            self.skip_ws();
            let group_start = self.pos;
            let group = self.swizzle_group()?;
            if group.plain && (group.count == 4 || group.count == 1) {
                swizzle = self.plain_swizzle(&group, group_start)?;
                let save2 = self.pos;
                self.skip_ws();
                if self.peek() == b'.' {
                    self.pos += 1;
                    self.skip_ws();
                    let ext_start = self.pos;
                    let ext = self.swizzle_group()?;
                    if ext.count != 4 {
                        return Err(bad_swizzle(ext_start, self.pos, "an extended swizzle has four items"));
                    }
                    legacy.extended_swizzle = Some(ext.items);
                } else {
                    self.pos = save2;
                }
            } else if group.count == 4 {
                legacy.extended_swizzle = Some(group.items);
            } else {
                return Err(bad_swizzle(
                    group_start,
                    self.pos,
                    "a source swizzle has four letters (or one, which is repeated)",
                ));
            }
        } else {
            self.pos = save;
        }
        // Closers, innermost first.
        if legacy.complement {
            self.skip_ws();
            self.expect(b')', "E0032", "to close `1-(`")?;
        }
        if legacy.bias {
            self.skip_ws();
            self.expect(b')', "E0032", "to close the biased operand")?;
            self.skip_ws();
            self.expect(b'-', "E0057", "after `( … )` (a bias is written `( … )-.5`)")?;
            self.skip_ws();
            if self.src[self.pos..].starts_with(b"0.5") {
                self.pos += 3;
            } else if self.src[self.pos..].starts_with(b".5") {
                self.pos += 2;
            } else {
                return Err(self
                    .error_here("E0057", "expected `.5` in a legacy bias `( … )-.5`")
                    .with_label("expected `.5`")
                    .into());
            }
        }
        if legacy.scale2 {
            self.skip_ws();
            self.expect(b')', "E0032", "to close `2*(`")?;
        }
        if absolute {
            self.skip_ws();
            self.expect(b'|', "E0012", "to close the absolute value")?;
        }
        if legacy.outer_negate {
            self.skip_ws();
            self.expect(b')', "E0032", "to close `-(`")?;
        }
        let needs_legacy = legacy.outer_negate
            || legacy.scale2
            || legacy.bias
            || legacy.complement
            || legacy.extended_swizzle.is_some()
            || (absolute && negate);
        let (negate, legacy) = if needs_legacy {
            legacy.outer_negate |= negate_before_abs;
            (negate, Some(Box::new(legacy)))
        } else {
            (negate || negate_before_abs, None)
        };
        Ok(SrcOperand { register, swizzle, negate, absolute, legacy, span: Span::new(start, self.pos) })
    }

    /// The common shapes `R.abcd`, `-R.abcd`, `|R.abcd|` and `-|R.abcd|` (or without the
    /// swizzle), where `R` is a register [`Self::fast_register`] reads, with no white space
    /// inside: what Mesa prints for almost every source. Read without the lookahead for legacy modifiers; the result is
    /// what the general path gives. `None` (cursor unchanged) for anything else.
    #[inline(always)]
    fn fast_src_operand(&mut self) -> Option<SrcOperand> {
        let start = self.pos;
        let operand = self.fast_src_operand_at(start);
        if operand.is_none() {
            self.pos = start;
        }
        operand
    }

    #[inline(always)]
    fn fast_src_operand_at(&mut self, start: usize) -> Option<SrcOperand> {
        let src = self.src;
        let negate = src.get(start) == Some(&b'-');
        let absolute = src.get(start + usize::from(negate)) == Some(&b'|');
        self.pos = start + usize::from(negate) + usize::from(absolute);
        let register = self.fast_register()?;
        let at = self.pos;
        let (swizzle, after) = match src.get(at..at + 5) {
            Some(&[b'.', a, b, c, d]) => (four_letters(a, b, c, d)?, at + 5),
            _ if src.get(at) == Some(&b'.') => None?,
            _ => (IDENTITY_SWIZZLE, at),
        };
        let end = match src.get(after) {
            Some(&b'|') if absolute => after + 1,
            Some(&c) if !absolute && is_ws(c) && src.get(self.next_non_ws(after)) != Some(&b'.') => after,
            Some(&b',') if !absolute => after,
            None if !absolute => after,
            _ => None?,
        };
        self.pos = end;
        Some(SrcOperand { register, swizzle, negate, absolute, legacy: None, span: Span::new(start, end) })
    }

    fn next_non_ws(&self, mut pos: usize) -> usize {
        while self.src.get(pos).is_some_and(|&c| is_ws(c)) {
            pos += 1;
        }
        pos
    }

    fn swizzle_group(&mut self) -> PResult<SwizzleGroup> {
        let start = self.pos;
        let mut group = SwizzleGroup {
            items: [ExtendedSwizzle { source: ExtendedComponent::Zero, negate: false }; 4],
            count: 0,
            plain: true,
        };
        while group.count < 4 {
            let negate = self.peek() == b'-';
            let c = if negate { self.peek_at(1) } else { self.peek() };
            let source = match c {
                b'0' => ExtendedComponent::Zero,
                b'1' => ExtendedComponent::One,
                _ => match component(c) {
                    Some(comp) if is_swizzle_letter(c) => ExtendedComponent::Component(comp),
                    _ => break,
                },
            };
            group.plain &= !negate && matches!(source, ExtendedComponent::Component(_));
            group.items[group.count] = ExtendedSwizzle { source, negate };
            group.count += 1;
            self.pos += 1 + usize::from(negate);
        }
        if group.count == 0 || is_ident(self.peek()) {
            let end = self.pos + self.word_at(self.pos).len();
            return Err(bad_swizzle(
                start,
                end.max(start + 1),
                "expected a swizzle: four of `x`, `y`, `z`, `w` (or one)",
            ));
        }
        Ok(group)
    }

    fn plain_swizzle(&self, group: &SwizzleGroup, start: usize) -> PResult<Swizzle> {
        let letter = |i: usize| match group.items[i].source {
            ExtendedComponent::Component(c) => c,
            _ => Component::X,
        };
        match group.count {
            1 if group.plain => Ok([letter(0); 4]),
            4 if group.plain => Ok([letter(0), letter(1), letter(2), letter(3)]),
            _ => Err(bad_swizzle(start, self.pos, "expected four swizzle letters")),
        }
    }
}

/// The digits at the start of `w` (a [`load8`] word), at most six: (value, count).
#[inline(always)]
fn digit_run(w: u64) -> (u32, usize) {
    let mut value = 0;
    let mut n = 0;
    while n < 6 {
        let d = (w >> (8 * n)) as u8 ^ b'0';
        if d > 9 {
            break;
        }
        value = value * 10 + u32::from(d);
        n += 1;
    }
    (value, n)
}

/// The unsigned number of one to five digits at `at`: its value and the position after it.
/// `None` for no digit or six and more (left to the general path).
#[inline(always)]
pub(super) fn fast_digits(src: &[u8], at: usize) -> Option<(u32, usize)> {
    let (value, n) = digit_run(load8(src, at));
    (n > 0 && n < 6).then_some((value, at + n))
}

/// `digits]` at `at` with a value that fits a register index and no `(`ArrayID after it:
/// (value, position after `]`). At most five digits (longer runs go to the general path).
#[inline(always)]
fn fast_index(src: &[u8], at: usize) -> Option<(i32, usize)> {
    let w = load8(src, at);
    let (value, n) = digit_run(w);
    // n <= 5 here, so the `]` and the byte after it are inside `w`.
    if n == 0 || n == 6 || value > i16::MAX as u32 || (w >> (8 * n)) as u8 != b']' || (w >> (8 * (n + 1))) as u8 == b'('
    {
        return None;
    }
    Some((value as i32, at + n + 1))
}

/// A valid write mask at the start of `text` (letters in order, then a byte that cannot
/// continue a word): (mask, letters). `None` for anything the general path must read or report.
#[inline(always)]
fn fast_write_mask(text: &[u8]) -> Option<(u8, usize)> {
    let mut mask = 0u8;
    let mut letters = 0;
    while let Some(&c) = text.get(letters) {
        match letter(c) {
            Some(comp) if 1u8 << comp as u8 > mask => mask |= 1 << comp as u8,
            _ if is_ident(c) => return None,
            _ => break,
        }
        letters += 1;
    }
    (letters > 0).then_some((mask, letters))
}

/// Component number of each swizzle letter (any case); [`NOT_A_LETTER`] for other bytes.
static LETTER: [u8; 256] = {
    let mut table = [NOT_A_LETTER; 256];
    let letters = *b"xyzw";
    let mut i = 0;
    while i < 4 {
        table[letters[i] as usize] = i as u8;
        table[letters[i].to_ascii_uppercase() as usize] = i as u8;
        i += 1;
    }
    table
};

/// Bit 2 set: no component (the four components are 0–3).
const NOT_A_LETTER: u8 = 4;

/// A swizzle letter, any case.
#[inline]
fn letter(c: u8) -> Option<Component> {
    Component::ALL.get(usize::from(LETTER[usize::from(c)])).copied()
}

/// Four swizzle letters, any case, or `None` if any byte is not one.
#[inline]
fn four_letters(a: u8, b: u8, c: u8, d: u8) -> Option<Swizzle> {
    // Spelled out: `array::map` here is an out-of-line call per swizzle.
    let (a, b, c, d) = (LETTER[usize::from(a)], LETTER[usize::from(b)], LETTER[usize::from(c)], LETTER[usize::from(d)]);
    if (a | b | c | d) & NOT_A_LETTER != 0 {
        return None;
    }
    let component = |x: u8| Component::ALL[usize::from(x & 3)];
    Some([component(a), component(b), component(c), component(d)])
}

/// The register file named at `at` when `[` follows it directly: the file and the position of
/// the `[`. Only the files instructions name most often; `None` sends the rest to the general
/// path. Names are matched in any case.
#[inline(always)]
pub(super) fn fast_file(src: &[u8], at: usize) -> Option<(File, usize)> {
    let w = load8(src, at);
    // The name's letters case-folded, then the `[` exactly ([`FOLD`] only turns letters into
    // upper-case letters, and zero padding never matches).
    let is = |key: u64, len: usize| w & (FOLD & low_bytes(len) | 0xff << (8 * len)) == key;
    let (file, len) = match w as u8 & !0x20 {
        b'T' if is(name_key(b"TEMP"), 4) => (File::Temp, 4),
        b'I' if is(name_key(b"IN"), 2) => (File::Input, 2),
        b'I' if is(name_key(b"IMM"), 3) => (File::Immediate, 3),
        b'I' if is(name_key(b"IMAGE"), 5) => (File::Image, 5),
        b'O' if is(name_key(b"OUT"), 3) => (File::Output, 3),
        b'C' if is(name_key(b"CONST"), 5) => (File::Const, 5),
        b'S' if is(name_key(b"SAMP"), 4) => (File::Sampler, 4),
        b'S' if is(name_key(b"SV"), 2) => (File::SystemValue, 2),
        b'S' if is(name_key(b"SVIEW"), 5) => (File::SamplerView, 5),
        b'A' if is(name_key(b"ADDR"), 4) => (File::Address, 4),
        b'B' if is(name_key(b"BUFFER"), 6) => (File::Buffer, 6),
        _ => return None,
    };
    Some((file, at + len))
}

/// An upper-case file name followed by `[`, as [`load8`] reads it.
const fn name_key(name: &[u8]) -> u64 {
    pack(name) | (b'[' as u64) << (8 * name.len())
}

fn is_swizzle_letter(c: u8) -> bool {
    matches!(c, b'x' | b'y' | b'z' | b'w' | b'X' | b'Y' | b'Z' | b'W')
}

fn bad_swizzle(start: usize, end: usize, message: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error("E0010", Span::new(start, end.max(start)), message.to_string())
            .with_label("malformed swizzle")
            .with_help("write e.g. `.xyzw`, `.xxxx` or `.x`"),
    )
}

/// Opcode lookup by upper-cased name (keeps the current opcode for `LOAD`/`ENDLOOP`).
fn lookup(upper_name: &[u8]) -> Option<Opcode> {
    names::opcode(upper_name)
}

fn unknown_file(src: &[u8], span: Span) -> Box<Diagnostic> {
    let text = String::from_utf8_lossy(&src[span.range()]).into_owned();
    let mut d = if text.is_empty() {
        Diagnostic::error(
            "E0004",
            Span::new(span.start as usize, (span.start as usize + 1).min(src.len())),
            format!("expected a register, found {}", describe(src, span.start as usize)),
        )
        .with_label("expected a register such as `TEMP[0]`")
    } else {
        Diagnostic::error("E0004", span, format!("unknown register file `{text}`")).with_label("not a register file")
    };
    if let Some(s) = names::closest(&text, File::ALL.iter().map(|f| f.name())) {
        d = d.with_help(format!("did you mean `{s}`?"));
    }
    Box::new(d)
}

pub(super) fn unknown_target(src: &[u8], span: Span) -> Box<Diagnostic> {
    let text = String::from_utf8_lossy(&src[span.range()]).into_owned();
    let mut d = if text.is_empty() {
        Diagnostic::error(
            "E0013",
            Span::new(span.start as usize, (span.start as usize + 1).min(src.len())),
            format!("expected a texture target, found {}", describe(src, span.start as usize)),
        )
    } else {
        Diagnostic::error("E0013", span, format!("unknown texture target `{text}`"))
    }
    .with_label("expected a texture target such as `2D`");
    if let Some(s) = names::closest(&text, TextureTarget::ALL.iter().map(|t| t.name())) {
        d = d.with_help(format!("did you mean `{s}`?"));
    }
    Box::new(d)
}

/// "1 destination and 2 sources, then a texture target", for notes.
pub(super) fn operand_summary(opcode: Opcode) -> String {
    let info = opcode.info();
    let plural = |n: u8, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let mut parts = Vec::new();
    if info.num_dst > 0 {
        parts.push(plural(info.num_dst, "destination"));
    }
    if info.num_src > 0 {
        parts.push(plural(info.num_src, "source"));
    }
    let mut text = if parts.is_empty() { "no operands".to_string() } else { parts.join(" and ") };
    if info.has_texture_target {
        text.push_str(", then a texture target");
    }
    if info.status == Status::Gap {
        text = "no operands".to_string();
    }
    text
}
