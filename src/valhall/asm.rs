//! Mesa-syntax assembly text → instruction / word (encoding spec §6.3, §4.3, §4.4.3, §3.2).
//!
//! [`parse_line`] accepts exactly what Mesa's assembler accepts, with two deliberate
//! exceptions where Mesa writes garbage (Appendix B items 18, 19): a 16-bit swizzle name with
//! index ≥ 4 on a 2-bit swizzle field, and an empty `@` on a write operand whose count field
//! holds `count − 1`, are rejected. Like Mesa it accepts reserved values (an unspecified
//! `lanes` field, `.reserved` flow), so it returns an instruction for [`encode_raw`], not
//! necessarily a valid one.
//!
//! Errors carry a byte span relative to the line and a stable code (`A0001`…, listed in
//! `docs/valhall.md`); [`assemble`] turns them into [`Diagnostic`]s over a whole text.

use super::encode::encode_raw;
use super::inst::{Base, Dest, Instr, Special, Src, Staging};
use super::tables::*;
use crate::diag::{Diagnostic, Diagnostics, Span};
use std::fmt;

/// An assembler error: a message, a stable code and the byte range of the line it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub code: &'static str,
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

impl AsmError {
    fn new(code: &'static str, span: Span, message: impl Into<String>) -> AsmError {
        AsmError { code, span, message: message.into(), help: None }
    }

    fn help(mut self, help: impl Into<String>) -> AsmError {
        self.help = Some(help.into());
        self
    }

    /// 1-based byte column of the start of the span.
    pub fn column(&self) -> usize {
        self.span.start as usize + 1
    }

    /// The diagnostic for a line starting at byte `offset` of its file.
    pub fn to_diagnostic(&self, offset: usize) -> Diagnostic {
        let span = Span::new(self.span.start as usize + offset, self.span.end as usize + offset);
        let d = Diagnostic::error(self.code, span, self.message.clone());
        match &self.help {
            Some(h) => d.with_help(h.clone()),
            None => d,
        }
    }
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: error[{}]: {}", self.column(), self.code, self.message)
    }
}

impl std::error::Error for AsmError {}

/// Error codes (documented in docs/valhall.md).
mod code {
    pub const MNEMONIC: &str = "A0001";
    pub const MODIFIER: &str = "A0002";
    pub const OPERANDS: &str = "A0003";
    pub const STAGING: &str = "A0004";
    pub const DEST: &str = "A0005";
    pub const SOURCE: &str = "A0006";
    pub const FAU: &str = "A0007";
    pub const IMMEDIATE: &str = "A0008";
    pub const ENCODE: &str = "A0009";
}

fn span(start: usize, len: usize) -> Span {
    Span::new(start, start + len)
}

/// Parses an integer literal the way Python's `int(text, 0)` does: optional sign, `0x`/`0o`/`0b`
/// prefixes, `_` between digits, no leading zeros in decimal.
pub fn parse_int(text: &str) -> Option<i64> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits, prefixed) = match lower.as_deref() {
        Some("0x") => (16, &body[2..], true),
        Some("0o") => (8, &body[2..], true),
        Some("0b") => (2, &body[2..], true),
        _ => (10, body, false),
    };
    let digits = if prefixed { digits.strip_prefix('_').unwrap_or(digits) } else { digits };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') || digits.contains("__") {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if radix == 10 && clean.len() > 1 && clean.starts_with('0') && clean.chars().any(|c| c != '0') {
        return None;
    }
    let value = i64::from_str_radix(&clean, radix).ok()?;
    Some(if negative { -value } else { value })
}

/// A piece of the line with its byte offset.
#[derive(Clone, Copy)]
struct Piece<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Piece<'a> {
    fn span(&self) -> Span {
        span(self.at, self.text.len())
    }

    fn sub(&self, from: usize, to: usize) -> Piece<'a> {
        Piece { text: &self.text[from..to], at: self.at + from }
    }

    /// Splits on `sep`, keeping offsets.
    fn split(self, sep: char) -> impl Iterator<Item = Piece<'a>> {
        let mut at = self.at;
        self.text.split(sep).map(move |part| {
            let piece = Piece { text: part, at };
            at += part.len() + sep.len_utf8();
            piece
        })
    }

    fn trim(self) -> Piece<'a> {
        let start = self.text.len() - self.text.trim_start().len();
        let trimmed = self.text.trim();
        Piece { text: trimmed, at: self.at + start }
    }
}

/// Assembles one line into a word.
pub fn assemble_line(line: &str) -> Result<u64, AsmError> {
    let instr = parse_line(line)?;
    encode_raw(&instr).map_err(|e| AsmError::new(code::ENCODE, span(0, line.len()), e.to_string()))
}

/// Assembles a text of one instruction per line. Blank lines and lines whose first
/// non-blank character is `#` are skipped, leading white space is ignored (so the
/// disassembler's indented listing assembles). Every failing line is reported.
pub fn assemble(text: &str) -> Result<Vec<u64>, Diagnostics> {
    let mut words = Vec::new();
    let mut errors = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let content = line.trim_start();
        let indent = line.len() - content.len();
        if !content.is_empty() && !content.starts_with('#') {
            match assemble_line(content) {
                Ok(word) => words.push(word),
                Err(e) => errors.push(e.to_diagnostic(offset + indent)),
            }
        }
        offset += raw.len();
    }
    if errors.is_empty() { Ok(words) } else { Err(Diagnostics(errors)) }
}

/// Parses one line of Mesa assembly into an instruction (see the module documentation).
pub fn parse_line(line: &str) -> Result<Instr, AsmError> {
    let whole = Piece { text: line, at: 0 };
    let (token, rest) = match line.find(' ') {
        Some(i) => (whole.sub(0, i), Some(whole.sub(i + 1, line.len()))),
        None => (whole, None),
    };
    let opcode = find_mnemonic(token)?;
    let info = opcode.info();
    let name_len = info.name.len();
    if token.text.len() > name_len && !token.text[name_len..].starts_with('.') {
        return Err(AsmError::new(code::MNEMONIC, token.span(), format!("unknown instruction `{}`", token.text))
            .help(format!("did you mean `{}`?", info.name)));
    }
    let items = if token.text.len() > name_len { Some(token.sub(name_len + 1, token.text.len())) } else { None };

    let operands: Vec<Piece> = match rest {
        Some(rest) => rest.split(',').map(Piece::trim).filter(|p| !p.text.is_empty()).collect(),
        None => Vec::new(),
    };
    let expected = info.staging.len() + usize::from(info.dest) + info.srcs.len() + info.imms.len();
    if operands.len() != expected {
        let at = rest.map_or(span(line.len(), 0), |r| r.span());
        return Err(AsmError::new(
            code::OPERANDS,
            at,
            format!(
                "{} takes {expected} operand{}, found {}",
                info.name,
                if expected == 1 { "" } else { "s" },
                operands.len()
            ),
        )
        .help(format!("operands of {}: {}", info.name, operand_summary(info))));
    }

    let mut instr = Instr {
        opcode,
        flow: 0,
        dest: Dest::NONE,
        staging: [Staging::default(); MAX_STAGING],
        srcs: [Src::EMPTY; MAX_SOURCES],
        imms: [0; MAX_IMMEDIATES],
        mods: [0; MAX_MODIFIERS],
    };
    let mut ops = operands.into_iter();
    for (k, sinfo) in info.staging.iter().enumerate() {
        let op = ops.next().ok_or_else(|| AsmError::new(code::OPERANDS, span(line.len(), 0), "missing operand"))?;
        instr.staging[k] = parse_staging(op, sinfo)?;
    }
    if info.dest {
        let op = ops.next().ok_or_else(|| AsmError::new(code::OPERANDS, span(line.len(), 0), "missing operand"))?;
        instr.dest = parse_dest(op)?;
    }
    let mut src_spans = [Span::default(); MAX_SOURCES];
    for (k, sinfo) in info.srcs.iter().enumerate() {
        let op = ops.next().ok_or_else(|| AsmError::new(code::OPERANDS, span(line.len(), 0), "missing operand"))?;
        src_spans[k] = op.span();
        instr.srcs[k] = parse_src(op, sinfo)?;
    }
    if let Err((k, e)) = instr.check_fau_limits() {
        let message = match e {
            super::InstrError::PageConflict { first, second, .. } => {
                format!(
                    "this operand needs FAU page {second}, an earlier one page {first}; an instruction reads one page"
                )
            }
            super::InstrError::Invalid { message, .. } => message,
            other => other.to_string(),
        };
        return Err(AsmError::new(code::FAU, src_spans[k], message));
    }
    for (k, f) in info.imms.iter().enumerate() {
        let op = ops.next().ok_or_else(|| AsmError::new(code::OPERANDS, span(line.len(), 0), "missing operand"))?;
        instr.imms[k] = parse_imm(op, f)?;
    }
    parse_modifiers(&mut instr, items, token)?;
    Ok(instr)
}

fn operand_summary(info: &InstrInfo) -> String {
    let mut parts = Vec::new();
    for s in info.staging {
        parts.push(if s.write { "@staging (written)" } else { "@staging (read)" }.to_string());
    }
    if info.dest {
        parts.push("destination".into());
    }
    for s in info.srcs {
        parts.push(format!("{}-bit source", s.size));
    }
    for i in info.imms {
        parts.push(if i.name == "constant" { "#constant".into() } else { format!("{}:value", i.name) });
    }
    if parts.is_empty() { "none".into() } else { parts.join(", ") }
}

fn find_mnemonic(token: Piece) -> Result<Opcode, AsmError> {
    let text = token.text;
    for len in (1..=text.len()).rev() {
        if text.is_char_boundary(len)
            && let Some(op) = Opcode::from_name(&text[..len])
        {
            return Ok(op);
        }
    }
    let shown = if text.is_empty() { "an instruction name" } else { text };
    let err = AsmError::new(
        code::MNEMONIC,
        if text.is_empty() { span(0, 1) } else { token.span() },
        format!("unknown instruction `{shown}`"),
    );
    let base = text.split('.').next().unwrap_or("");
    let similar: Vec<&str> =
        BY_NAME.iter().map(|(n, _)| *n).filter(|n| !base.is_empty() && n.starts_with(base)).take(4).collect();
    Err(if text.is_empty() {
        AsmError::new(code::MNEMONIC, span(0, 0), "expected an instruction name at the start of the line")
    } else if similar.is_empty() {
        err
    } else {
        err.help(format!("instructions starting with `{base}`: {}", similar.join(", ")))
    })
}

fn parse_register(piece: Piece, what: &str, code: &'static str) -> Result<u8, AsmError> {
    let text = piece.text;
    let number = text.strip_prefix('r').and_then(parse_int);
    match number {
        Some(n) if (0..64).contains(&n) => Ok(n as u8),
        Some(n) => Err(AsmError::new(code, piece.span(), format!("register r{n} does not exist (r0..r63)"))),
        None => Err(AsmError::new(code, piece.span(), format!("expected a register for the {what}, found `{text}`"))),
    }
}

fn parse_staging(op: Piece, info: &StagingInfo) -> Result<Staging, AsmError> {
    if !op.text.starts_with('@') {
        return Err(AsmError::new(
            code::STAGING,
            op.span(),
            format!("expected a staging operand `@rN:…`, found `{}`", op.text),
        ));
    };
    let list = op.sub(1, op.text.len());
    let mut regs = Vec::new();
    if !list.text.is_empty() {
        for reg in list.split(':') {
            regs.push((parse_register(reg, "staging operand", code::STAGING)?, reg));
        }
    }
    let base = regs.first().map_or(0, |r| r.0);
    for (i, (reg, piece)) in regs.iter().enumerate() {
        if usize::from(*reg) != usize::from(base) + i {
            return Err(AsmError::new(
                code::STAGING,
                piece.span(),
                "staging registers must be consecutive and ascending",
            ));
        }
    }
    let count = regs.len();
    if count > 1 && base % 2 != 0 {
        return Err(AsmError::new(
            code::STAGING,
            op.span(),
            format!("a group of {count} staging registers must start at an even register"),
        )
        .help(format!("r{base} is odd: use r{} or r{}", base - 1, base + 1)));
    }
    let max = if info.count_minus_one { 8 } else { 7 };
    if count > max {
        return Err(AsmError::new(code::STAGING, op.span(), format!("at most {max} staging registers, found {count}")));
    }
    if info.count_minus_one && count == 0 {
        let _ = list;
        return Err(AsmError::new(code::STAGING, op.span(), "this staging operand needs at least one register"));
    }
    Ok(Staging { base, count: count as u8 })
}

fn parse_dest(op: Piece) -> Result<Dest, AsmError> {
    let (reg, mask) = match op.text.split_once('.') {
        None => (op, 3),
        Some((r, suffix)) => {
            let mask = match suffix {
                "h0" => 1,
                "h1" => 2,
                _ => {
                    let at = op.sub(r.len() + 1, op.text.len());
                    return Err(AsmError::new(
                        code::DEST,
                        at.span(),
                        format!("unknown destination suffix `.{suffix}` (expected `.h0` or `.h1`)"),
                    ));
                }
            };
            (op.sub(0, r.len()), mask)
        }
    };
    Ok(Dest { reg: parse_register(reg, "destination", code::DEST)?, mask })
}

fn enum_index(id: EnumId, name: &str) -> Option<u8> {
    id.info().lookup(name)
}

fn parse_src(op: Piece, info: &SrcInfo) -> Result<Src, AsmError> {
    let mut parts = op.split('.');
    let base_piece = parts.next().unwrap_or(op);
    let b = base_piece.text;
    let err = |p: Piece, m: String| AsmError::new(code::SOURCE, p.span(), m);
    let base = if let Some(rest) = b.strip_prefix('^') {
        if !rest.starts_with('r') {
            return Err(err(base_piece, format!("`^` (last use) must be followed by a register, found `{b}`")));
        }
        Base::Discard(parse_register(base_piece.sub(1, b.len()), "source", code::SOURCE)?)
    } else if b.starts_with('r') && b.len() > 1 && parse_int(&b[1..]).is_some() {
        Base::Register(parse_register(base_piece, "source", code::SOURCE)?)
    } else if b.starts_with('u') && b.len() > 1 && parse_int(&b[1..]).is_some() {
        match parse_int(&b[1..]) {
            Some(n) if (0..128).contains(&n) => Base::Uniform(n as u8),
            _ => return Err(err(base_piece, format!("uniform `{b}` does not exist (u0..u127)"))),
        }
    } else if let Some(hex) = b.strip_prefix("0x") {
        let value = u32::from_str_radix(hex, 16)
            .map_err(|_| err(base_piece, format!("`{b}` is not a 32-bit hexadecimal value")))?;
        match IMMEDIATES.iter().position(|(v, _)| *v == value) {
            Some(i) => Base::Immediate(i as u8),
            None => {
                return Err(err(base_piece, format!("{b} is not in the immediate table")).help(
                    "only the 32 table values can be sources; use IADD_IMM/FADD_IMM or a register for other constants",
                ));
            }
        }
    } else if let Some(special) = Special::named(b, false) {
        Base::Special(special)
    } else {
        return Err(err(base_piece, format!("unknown source `{b}`"))
            .help("sources are rN, ^rN, uN, an immediate-table value such as 0x3F800000, or a special value such as lane_id.w0"));
    };
    let mut src = Src::new(base);
    let mut swizzled = false;
    let mut word_given = false;
    let size = info.size;
    let sw_size = match size {
        8 => Some(EnumId::Swizzles8Bit),
        16 => Some(EnumId::Swizzles16Bit),
        32 => Some(EnumId::Swizzles32Bit),
        64 => Some(EnumId::Swizzles64Bit),
        _ => None,
    };
    let lane_size = match size {
        8 => Some(EnumId::Lane8Bit),
        16 => Some(EnumId::Lane16Bit),
        _ => None,
    };
    for part in parts {
        let m = part.text;
        let swizzle_kind = |swizzled: &mut bool| -> Result<(), AsmError> {
            if *swizzled {
                return Err(err(part, "more than one swizzle on this operand".into()));
            }
            *swizzled = true;
            Ok(())
        };
        let has = |f: Option<SrcField>| f.is_some();
        if (m == "neg" && info.neg.is_some())
            || (m == "abs" && info.abs.is_some())
            || (m == "not" && info.not.is_some())
        {
            match m {
                "neg" => src.neg = true,
                "abs" => src.abs = true,
                _ => src.not = true,
            }
        } else if m == "lane" && size == 16 && info.lane.is_some() {
            src.lane |= 1;
        } else if let (WidenKind::HalfSwizzle, Some(i)) = (info.widen_kind, enum_index(EnumId::HalfSwizzles8Bit, m)) {
            swizzle_kind(&mut swizzled)?;
            src.widen = i;
        } else if let (true, Some(i)) =
            (matches!(info.widen_kind, WidenKind::Widen | WidenKind::Lanes), sw_size.and_then(|e| enum_index(e, m)))
        {
            swizzle_kind(&mut swizzled)?;
            src.widen = i;
        } else if let (true, Some(i)) = (has(info.lane), lane_size.and_then(|e| enum_index(e, m))) {
            swizzle_kind(&mut swizzled)?;
            src.lane = i;
        } else if let (WidenKind::Combine, Some(i)) = (info.widen_kind, enum_index(EnumId::Combine, m)) {
            swizzle_kind(&mut swizzled)?;
            src.widen = i;
        } else if let (32, Some(i)) = (size, enum_index(EnumId::Widen, m)) {
            if info.swizzle.is_none() {
                return Err(err(part, format!("this operand takes no `.{m}` swizzle")));
            }
            swizzle_kind(&mut swizzled)?;
            src.swizzle = i;
        } else if let (16, Some(i)) = (size, enum_index(EnumId::Swizzles16Bit, m)) {
            if info.swizzle.is_none() {
                return Err(err(part, format!("this operand takes no `.{m}` swizzle")));
            }
            if i >= 4 {
                return Err(err(
                    part,
                    format!("`.{m}` does not fit the 2-bit swizzle field of this operand (h00, h10, h01, h11)"),
                ));
            }
            swizzle_kind(&mut swizzled)?;
            src.swizzle = i;
        } else if let Some(i) = enum_index(EnumId::Lane8Bit, m) {
            if info.lane.is_none() {
                return Err(err(part, format!("this operand takes no lane select `.{m}`")));
            }
            swizzle_kind(&mut swizzled)?;
            src.lane = i;
        } else if let Some(i) = enum_index(EnumId::Lanes8Bit, m) {
            if info.widen_kind != WidenKind::Lanes {
                return Err(err(part, format!("this operand takes no lanes select `.{m}`")));
            }
            swizzle_kind(&mut swizzled)?;
            src.widen = i;
        } else if m == "w0" || m == "w1" {
            let Base::Special(mut sp) = src.base else {
                return Err(err(part, format!("`.{m}` selects a word of a special value; this operand is not one")));
            };
            if word_given {
                return Err(err(part, "the word of this special value is already selected".into()));
            }
            word_given = true;
            sp.high = m == "w1";
            src.base = Base::Special(sp);
        } else {
            return Err(err(part, format!("unknown operand modifier `.{m}`")));
        }
    }
    if !swizzled && size == 16 {
        if info.swizzle.is_some() {
            src.swizzle = 2;
        } else if info.widen_kind == WidenKind::Widen {
            src.widen = 2;
        }
    }
    Ok(src)
}

fn parse_imm(op: Piece, f: &ImmInfo) -> Result<u32, AsmError> {
    let err = |m: String| AsmError::new(code::IMMEDIATE, op.span(), m);
    // `#value` is the constant field's form; `name:value` works for every field (Mesa accepts
    // `constant:value` too).
    let value_text = if let Some(v) = op.text.strip_prefix('#') {
        if f.name != "constant" {
            return Err(err(format!("`#value` is only for the constant; write `{}:value`", f.name)));
        }
        v
    } else {
        let mut split = op.text.split(':');
        let (name, value, extra) = (split.next(), split.next(), split.next());
        match (name, value, extra) {
            (Some(n), Some(v), None) if n == f.name => v,
            _ => {
                let form = if f.name == "constant" { "#value".to_string() } else { format!("{}:value", f.name) };
                return Err(err(format!("expected `{form}`, found `{}`", op.text)));
            }
        }
    };
    let value = parse_int(value_text).ok_or_else(|| err(format!("`{value_text}` is not an integer")))?;
    let (lo, hi) = f.range();
    if value < lo || value > hi {
        return Err(err(format!(
            "{} {value} is out of range ({lo}..={hi})",
            if f.name == "constant" { "constant" } else { f.name }
        )));
    }
    Ok((if value < 0 { value + (1i64 << f.width) } else { value }) as u32)
}

fn parse_modifiers(instr: &mut Instr, items: Option<Piece>, token: Piece) -> Result<(), AsmError> {
    let info = instr.info();
    let mut set = [false; MAX_MODIFIERS];
    let mut flow_set = false;
    let err = |p: Piece, m: String| AsmError::new(code::MODIFIER, p.span(), m);
    if let Some(items) = items {
        for item in items.split('.') {
            let m = item.text;
            if m.is_empty() {
                continue;
            }
            if let Some(flow) = EnumId::Flow.info().lookup(m) {
                if flow_set {
                    return Err(err(item, format!("a second flow value `.{m}` (an instruction has one)")));
                }
                flow_set = true;
                instr.flow = flow;
                continue;
            }
            let mut found: Option<(usize, u8)> = None;
            let mut matches = 0;
            for (k, md) in info.mods.iter().enumerate() {
                // Mesa's spelling, or (an extension) the unique key of a renamed or hidden flag.
                let value = match md.kind {
                    ModKind::Flag => (md.text == m || (md.key == m && md.key != md.text)).then_some(1),
                    ModKind::Enum(id) => id.info().lookup(m),
                };
                if let Some(v) = value {
                    matches += 1;
                    found.get_or_insert((k, v));
                }
            }
            match (found, matches) {
                (None, _) => {
                    let names = modifier_names(info);
                    let e = err(item, format!("{} has no modifier `.{m}`", info.name));
                    return Err(if names.is_empty() {
                        e.help(format!("{} takes no modifiers besides the flow", info.name))
                    } else {
                        e.help(format!("modifiers of {}: {names}", info.name))
                    });
                }
                (Some(_), n) if n > 1 => {
                    return Err(err(item, format!("`.{m}` is ambiguous: it names {n} modifiers of {}", info.name)));
                }
                (Some((k, v)), _) => {
                    if set[k] {
                        return Err(err(item, format!("modifier `{}` is given twice", info.mods[k].key)));
                    }
                    set[k] = true;
                    instr.mods[k] = v;
                }
            }
        }
    }
    for (k, md) in info.mods.iter().enumerate() {
        if set[k] {
            continue;
        }
        if md.required() {
            let values: Vec<&str> =
                md.enum_info().map(|e| e.values.iter().flatten().copied().collect()).unwrap_or_default();
            return Err(err(token, format!("{} needs a `{}` modifier", info.name, md.key))
                .help(format!("one of: .{}", values.join(", ."))));
        }
        instr.mods[k] = md.initial();
    }
    Ok(())
}

fn modifier_names(info: &InstrInfo) -> String {
    let mut out = Vec::new();
    for md in info.mods {
        match md.enum_info() {
            None => out.push(format!(".{}", md.key)),
            Some(e) => {
                out.push(format!("{} (.{})", md.key, e.values.iter().flatten().copied().collect::<Vec<_>>().join("|.")))
            }
        }
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn constant_field_takes_both_forms() {
        let a = super::assemble_line("IADD_IMM.i32 r54, 0x0, #0x10");
        let b = super::assemble_line("IADD_IMM.i32 r54, 0x0, constant:16");
        assert!(a.is_ok());
        assert_eq!(a, b);
        assert!(super::assemble_line("BRANCHZ r1, #3").is_err());
    }

    #[test]
    fn python_integer_literals() {
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("-8"), Some(-8));
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("0X_1f"), Some(31));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("0o17"), Some(15));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("00"), Some(0));
        assert_eq!(parse_int("007"), None);
        assert_eq!(parse_int("1__0"), None);
        assert_eq!(parse_int("_1"), None);
        assert_eq!(parse_int(""), None);
        assert_eq!(parse_int("0x"), None);
        assert_eq!(parse_int("12a"), None);
    }
}
