//! TGSI text parser.
//!
//! Reads everything Mesa 25.0.7's `tgsi_text.c` reads, plus the legacy syntax of older Mesa
//! releases (docs/tgsi-text-format.md §10.2), into an [`ast::Program`](super::ast::Program).
//! `docs/tgsi.md` lists where we are deliberately more lenient or stricter than Mesa.
//!
//! Design:
//! * a hand-driven cursor over the bytes; token-level pieces (digit and identifier runs) use
//!   nom's byte combinators; keywords are upper-cased into a stack buffer and matched against
//!   fixed tables, so parsing allocates only for the tree itself;
//! * what Mesa prints (register names, indices, opcode mnemonics, statement keywords) is read by
//!   fast paths that compare whole little-endian words ([`load8`], case-folded with [`FOLD`])
//!   instead of bytes; anything else, and every error, goes to the general path, so both give
//!   the same tree and the same diagnostics;
//! * statements are dispatched in Mesa's order: numeric label, `DCL`, `IMM`, `PROPERTY`,
//!   opcode;
//! * an error ends the statement; the parser records it, skips to the next line and goes on,
//!   so one run reports many errors (at most [`MAX_ERRORS`]);
//! * nothing recurses on the input: nesting is tracked with explicit stacks, so time and
//!   stack use are linear resp. constant in the input size.

mod decl;
mod inst;
mod names;
pub(crate) mod num;

use super::ast::*;
use crate::diag::{Diagnostic, Diagnostics, Span};

// A statement is a few hundred bytes, so even a short shader's list is a large allocation:
// a compile hands its list back when lowering is done with it (see `crate::reuse`).
crate::reuse::shelf!(SPARE_STATEMENTS: Statement);

/// Keeps `program`'s statement list (emptied) for the next parse on this thread.
pub(crate) fn recycle(program: Program) {
    crate::reuse::give(&SPARE_STATEMENTS, program.statements);
}

/// Parsing stops after this many errors.
pub const MAX_ERRORS: usize = 50;

type PResult<T> = Result<T, Box<Diagnostic>>;

/// Parses TGSI text into a program, or returns every syntax error found.
pub fn parse(text: &str) -> Result<Program, Diagnostics> {
    Parser::new(text).run()
}

pub(super) struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    processor: Processor,
    /// Size implied by empty `[]` brackets in declarations (GS input vertices, 32 in TCS/TES).
    implied_size: u32,
    immediates: u32,
    /// Open loops, innermost last: `true` for a legacy `LOOP` (so `ENDLOOP` closes it as the
    /// legacy opcode 79).
    loops: Vec<bool>,
    diags: Vec<Diagnostic>,
}

pub(super) fn is_ws(c: u8) -> bool {
    // CR is accepted as white space so that CRLF files parse (Mesa rejects them).
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Identifier bytes: letters, digits and `_`.
static IDENT: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric() || b == b'_';
        c += 1;
    }
    table
};

#[inline]
pub(super) fn is_ident(c: u8) -> bool {
    IDENT[usize::from(c)]
}

/// Upper-cases `word` into `buf`; `None` when it is longer than any keyword can be.
pub(super) fn upper<'b>(word: &[u8], buf: &'b mut [u8; 64]) -> Option<&'b [u8]> {
    let dst = buf.get_mut(..word.len())?;
    for (d, s) in dst.iter_mut().zip(word) {
        *d = s.to_ascii_uppercase();
    }
    Some(dst)
}

/// The eight bytes at `at` as a little-endian word (byte `at` lowest), zero-padded past the end
/// of `src`. The scanners compare keywords and read digits in this word instead of byte by
/// byte with a bounds check each; a zero byte is never part of a token, so the padding cannot
/// complete one.
#[inline(always)]
pub(super) fn load8(src: &[u8], at: usize) -> u64 {
    match src.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        Some(&bytes) => u64::from_le_bytes(bytes),
        None => load8_tail(src, at),
    }
}

#[cold]
fn load8_tail(src: &[u8], at: usize) -> u64 {
    src.get(at..).unwrap_or(&[]).iter().take(8).rev().fold(0, |w, &c| (w << 8) | u64::from(c))
}

/// The number of identifier bytes ([`is_ident`]) at the start of a [`load8`] word, 8 when all
/// are. Word-wide: each byte is classified by range tests on its low seven bits, which cannot
/// carry into the next byte, and bytes with the top bit set (not ASCII) are never identifier
/// bytes.
#[inline(always)]
pub(super) fn ident_len(word: u64) -> usize {
    const fn rep(b: u8) -> u64 {
        0x0101_0101_0101_0101 * b as u64
    }
    const HIGH: u64 = rep(0x80);
    // Top bit of each byte of `x + rep(0x80 - lo)` resp. `x + rep(0x7f - hi)`: x ≥ lo resp. x > hi.
    let in_range = |x: u64, lo: u8, hi: u8| (x + rep(0x80 - lo)) & !(x + rep(0x7f - hi));
    let low = word & !HIGH;
    let digit = in_range(low, b'0', b'9');
    // Clearing bit 5 folds lower-case letters onto upper-case ones and moves no other byte
    // into `A`–`Z`.
    let letter = in_range(low & rep(0xdf), b'A', b'Z');
    let underscore = !((low ^ rep(b'_')) + rep(0x7f));
    let ident = (digit | letter | underscore) & !word & HIGH;
    ((!ident & HIGH).trailing_zeros() / 8) as usize
}

/// A [`load8`] word of ASCII bytes with `a`–`z` upper-cased (bit 5 of those bytes cleared).
#[inline(always)]
pub(super) fn ascii_upper(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let low = word & LOW7;
    // Top bit of each byte: at least `a` and not above `z` (the sums cannot carry).
    let lower = (low + 0x1f1f_1f1f_1f1f_1f1f) & !(low + 0x0505_0505_0505_0505) & !word & !LOW7;
    word & !(lower >> 2)
}

/// The low `n` bytes of a word set (`n` ≤ 8).
#[inline(always)]
pub(super) fn low_bytes(n: usize) -> u64 {
    if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 }
}

/// Clears bit 5 of every byte: folds ASCII letters to upper case. On identifier bytes
/// (`[A-Za-z0-9_]`) it is one-to-one up to letter case (digits become 0x10–0x19, `_` stays),
/// so folded identifiers compare equal exactly when they are equal ignoring case.
pub(super) const FOLD: u64 = 0xdfdf_dfdf_dfdf_dfdf;

/// `name` (at most eight bytes) as [`load8`] reads it.
pub(super) const fn pack(name: &[u8]) -> u64 {
    let mut word = 0;
    let mut i = 0;
    while i < name.len() {
        word |= (name[i] as u64) << (8 * i);
        i += 1;
    }
    word
}

/// The keywords that start a statement other than an instruction.
#[derive(Clone, Copy)]
enum Keyword {
    Dcl,
    Imm,
    Property,
}

/// The statement keyword (any case) that the identifier at `at` is, if any: the keyword's
/// letters, then a byte that cannot continue an identifier. Read from one word, without
/// scanning the identifier first.
#[inline(always)]
fn statement_keyword(src: &[u8], at: usize) -> Option<Keyword> {
    let word = load8(src, at);
    let folded = word & FOLD;
    if !is_ident((word >> 24) as u8) {
        return match folded & low_bytes(3) {
            w if w == pack(b"DCL") => Some(Keyword::Dcl),
            w if w == pack(b"IMM") => Some(Keyword::Imm),
            _ => None,
        };
    }
    (folded == pack(b"PROPERTY") && !is_ident(src.get(at + 8).copied().unwrap_or(0))).then_some(Keyword::Property)
}

/// The number of LF bytes: per chunk of at most 255 bytes, a byte-wide sum, which the compiler
/// turns into 16-byte vector compares (baseline x86-64 has no popcount instruction, so counting
/// bits of a word per eight bytes cost several times more).
fn count_lines(src: &[u8]) -> usize {
    src.chunks(255).map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &c| n.wrapping_add(u8::from(c == b'\n'))))).sum()
}

/// A printable rendering of the text at an error position, for messages.
fn describe(src: &[u8], pos: usize) -> String {
    match src.get(pos) {
        None => "end of input".to_string(),
        Some(b'\n' | b'\r') => "end of line".to_string(),
        Some(&c) if is_ident(c) => {
            let end = pos + src[pos..].iter().take_while(|&&c| is_ident(c)).count();
            let word = String::from_utf8_lossy(&src[pos..end.min(pos + 40)]);
            format!("`{word}`")
        }
        Some(&c) if c.is_ascii_graphic() => format!("`{}`", c as char),
        Some(&c) if c < 0x80 => format!("character 0x{c:02x}"),
        Some(_) => {
            let s = String::from_utf8_lossy(&src[pos..(pos + 4).min(src.len())]);
            format!("`{}`", s.chars().next().unwrap_or('?'))
        }
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser {
            src: text.as_bytes(),
            pos: 0,
            processor: Processor::Frag,
            implied_size: 0,
            immediates: 0,
            loops: Vec::new(),
            diags: Vec::new(),
        }
    }

    fn run(mut self) -> Result<Program, Diagnostics> {
        self.skip_ws();
        let header = match self.header() {
            Ok(h) => h,
            Err(d) => {
                let at = d.primary.span.start as usize;
                let mut d = *d;
                if matches!(self.peek(), b'#' | b';' | b'/') {
                    d = d.with_note("TGSI text has no comments");
                }
                self.diags.push(d);
                // Go on with the statements if the first word is one; otherwise skip the line
                // and take a header on the next one if there is one.
                let mut header = Header { processor: Processor::Frag, legacy_version: None, span: Span::at(0) };
                if !self.at_statement_keyword() {
                    self.recover(at);
                    self.skip_ws();
                    let mut buf = [0u8; 64];
                    let word = self.word_at(self.pos);
                    if upper(word, &mut buf).and_then(names::processor).is_some() {
                        if let Ok(h) = self.header() {
                            header = h;
                        }
                    }
                }
                header
            }
        };
        self.processor = header.processor;
        self.implied_size = match header.processor {
            Processor::TessCtrl | Processor::TessEval => 32,
            _ => 0,
        };
        // One statement per line is typical; counting lines is much cheaper than regrowing.
        let mut statements = crate::reuse::take(&SPARE_STATEMENTS, count_lines(self.src) + 1);
        let mut separated = true;
        loop {
            separated |= self.skip_ws();
            if self.pos >= self.src.len() {
                break;
            }
            if self.error_count() >= MAX_ERRORS {
                self.diags.push(
                    Diagnostic::error(
                        "E0099",
                        Span::at(self.pos),
                        format!("too many errors; stopping after {MAX_ERRORS}"),
                    )
                    .with_note("fix the errors above and run again to see the rest"),
                );
                break;
            }
            let start = self.pos;
            let result = if separated {
                self.statement(&mut statements)
            } else {
                Err(self
                    .error_here(
                        "E0002",
                        format!(
                            "expected white space before the next statement, found {}",
                            describe(self.src, self.pos)
                        ),
                    )
                    .with_label("a statement must be separated from the previous one by white space")
                    .into())
            };
            match result {
                Ok(()) => {}
                Err(d) => {
                    let at = (d.primary.span.start as usize).max(start);
                    self.diags.push(*d);
                    self.recover(at);
                    separated = true;
                    continue;
                }
            }
            separated = false;
        }
        if self.diags.iter().any(Diagnostic::is_error) {
            return Err(Diagnostics(self.diags));
        }
        Ok(Program { header, statements })
    }

    fn error_count(&self) -> usize {
        self.diags.iter().filter(|d| d.is_error()).count()
    }

    /// Skips to the start of the line after the one containing `at`.
    fn recover(&mut self, at: usize) {
        let at = at.min(self.src.len());
        self.pos = match self.src[at..].iter().position(|&c| c == b'\n') {
            Some(n) => at + n + 1,
            None => self.src.len(),
        };
    }

    fn at_statement_keyword(&self) -> bool {
        let mut buf = [0u8; 64];
        let word = self.word_at(self.pos);
        matches!(upper(word, &mut buf), Some(b"DCL" | b"IMM" | b"PROPERTY"))
            || self.peek().is_ascii_digit()
            || upper(word, &mut buf)
                .and_then(|w| std::str::from_utf8(w).ok())
                .and_then(super::opcodes::by_name)
                .is_some()
    }

    // -----------------------------------------------------------------------------------------
    // Cursor primitives

    #[inline]
    fn peek(&self) -> u8 {
        self.src.get(self.pos).copied().unwrap_or(0)
    }

    #[inline]
    fn peek_at(&self, offset: usize) -> u8 {
        self.src.get(self.pos + offset).copied().unwrap_or(0)
    }

    #[inline]
    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    /// Skips white space; says whether there was any.
    #[inline]
    fn skip_ws(&mut self) -> bool {
        // A local cursor: `self.pos` is written once, not per byte.
        let (src, start) = (self.src, self.pos);
        let mut i = start;
        while i < src.len() && is_ws(src[i]) {
            i += 1;
        }
        self.pos = i;
        i > start
    }

    /// The identifier run (`[A-Za-z0-9_]*`) starting at `pos`.
    #[inline]
    fn word_at(&self, pos: usize) -> &'a [u8] {
        let src: &'a [u8] = self.src;
        let start = pos.min(src.len());
        // The first eight bytes at once (keywords, mnemonics and register names are short),
        // then byte by byte.
        let mut end = start + ident_len(load8(src, start));
        if end - start == 8 {
            while end < src.len() && is_ident(src[end]) {
                end += 1;
            }
        }
        debug_assert_eq!(end, start + src[start..].iter().take_while(|&&c| is_ident(c)).count());
        &src[start..end]
    }

    /// Reads the identifier at the cursor: its text and span.
    #[inline]
    fn word(&mut self) -> (&'a [u8], Span) {
        let start = self.pos;
        let word = self.word_at(start);
        self.pos += word.len();
        (word, Span::new(start, self.pos))
    }

    fn error_here(&self, code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(code, Span::new(self.pos, (self.pos + 1).min(self.src.len())), message)
    }

    /// Consumes `c` or fails with "expected `c`".
    #[inline]
    fn expect(&mut self, c: u8, code: &'static str, context: &str) -> PResult<()> {
        if self.peek() == c {
            self.pos += 1;
            return Ok(());
        }
        Err(self.expected_byte(c, code, context))
    }

    #[cold]
    fn expected_byte(&self, c: u8, code: &'static str, context: &str) -> Box<Diagnostic> {
        Box::new(
            self.error_here(
                code,
                format!("expected `{}` {context}, found {}", c as char, describe(self.src, self.pos)),
            )
            .with_label(format!("expected `{}`", c as char)),
        )
    }

    /// An unsigned decimal number: its value (saturated at `u64::MAX`) and span.
    #[inline]
    fn uint(&mut self, what: &str) -> PResult<(u64, Span)> {
        let start = self.pos;
        let mut value: u64 = 0;
        let mut end = start;
        while let Some(&c) = self.src.get(end) {
            if !c.is_ascii_digit() {
                break;
            }
            value = value.saturating_mul(10).saturating_add(u64::from(c - b'0'));
            end += 1;
        }
        if end == start {
            return Err(self.expected_uint(what));
        }
        self.pos = end;
        Ok((value, Span::new(start, end)))
    }

    #[cold]
    fn expected_uint(&self, what: &str) -> Box<Diagnostic> {
        Box::new(
            self.error_here("E0007", format!("expected {what}, found {}", describe(self.src, self.pos)))
                .with_label("expected an unsigned decimal number"),
        )
    }

    /// An unsigned number that must fit Mesa's `field`; reports (and clamps) one that does not.
    #[inline]
    fn bounded_uint(&mut self, what: &str, field: Field) -> PResult<u32> {
        let (value, span) = self.uint(what)?;
        if value > field.max() {
            self.diags.push(out_of_range(span, what, value, field));
            return Ok(field.max() as u32);
        }
        Ok(value as u32)
    }

    // -----------------------------------------------------------------------------------------
    // Header and statement dispatch

    fn header(&mut self) -> PResult<Header> {
        let start = self.pos;
        let (word, span) = self.word();
        let mut buf = [0u8; 64];
        let upper_word = upper(word, &mut buf).unwrap_or(b"");
        if let Some(p) = names::processor(upper_word).filter(|p| !matches!(p, Processor::Task | Processor::Mesh)) {
            return Ok(Header { processor: p, legacy_version: None, span });
        }
        // Legacy `FRAG1.1`: the word reads as "FRAG1", then ".1".
        for (name, p) in [(&b"FRAG"[..], Processor::Frag), (b"VERT", Processor::Vert), (b"GEOM", Processor::Geom)] {
            if let Some(major) = upper_word.strip_prefix(name)
                && !major.is_empty()
                && major.iter().all(u8::is_ascii_digit)
                && self.peek() == b'.'
                && self.peek_at(1).is_ascii_digit()
            {
                self.pos += 1;
                let minor = num::digits(&self.src[self.pos..]);
                self.pos += minor.len();
                let major = num::decimal_value(major).min(u64::from(u32::MAX)) as u32;
                let minor = num::decimal_value(minor).min(u64::from(u32::MAX)) as u32;
                return Ok(Header {
                    processor: p,
                    legacy_version: Some((major, minor)),
                    span: Span::new(start, self.pos),
                });
            }
        }
        self.pos = start;
        let found = describe(self.src, start);
        let mut d = Diagnostic::error(
            "E0001",
            if word.is_empty() { Span::new(start, (start + 1).min(self.src.len())) } else { span },
            if self.src.is_empty() || start >= self.src.len() {
                "empty input: expected a shader header".to_string()
            } else {
                format!("expected a shader header, found {found}")
            },
        )
        .with_label("not a shader type")
        .with_note("a TGSI shader starts with `VERT`, `FRAG`, `GEOM`, `TESS_CTRL`, `TESS_EVAL` or `COMP`");
        if let Some(s) = std::str::from_utf8(word)
            .ok()
            .and_then(|w| names::closest(w, ["VERT", "FRAG", "GEOM", "TESS_CTRL", "TESS_EVAL", "COMP"].into_iter()))
        {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(d.into())
    }

    /// Parses one statement and appends it to `statements`.
    #[inline(always)]
    fn statement(&mut self, statements: &mut Vec<Statement>) -> PResult<()> {
        let start = self.pos;
        if self.peek().is_ascii_digit() {
            // `N:` instruction label: skipped (the printer renumbers).
            while self.peek().is_ascii_digit() {
                self.pos += 1;
            }
            self.skip_ws();
            if self.peek() != b':' {
                return Err(self
                    .error_here(
                        "E0003",
                        format!("expected `:` after the instruction number, found {}", describe(self.src, self.pos)),
                    )
                    .with_label("expected `:`")
                    .into());
            }
            self.pos += 1;
            self.skip_ws();
            if let Some(kw) = statement_keyword(self.src, self.pos) {
                let span = Span::new(self.pos, self.pos + self.word_at(self.pos).len());
                let kw = match kw {
                    Keyword::Dcl => "DCL",
                    Keyword::Imm => "IMM",
                    Keyword::Property => "PROPERTY",
                };
                return Err(Diagnostic::error("E0003", span, format!("`{kw}` cannot have an instruction label"))
                    .with_label("only instructions are numbered")
                    .with_help("remove the `N:` in front")
                    .into());
            }
            return self.instruction(start, statements);
        }
        match statement_keyword(self.src, self.pos) {
            Some(Keyword::Dcl) => {
                self.pos += 3;
                let d = self.declaration(start)?;
                statements.push(Statement::Declaration(d));
                Ok(())
            }
            Some(Keyword::Imm) => {
                self.pos += 3;
                let i = self.immediate(start)?;
                statements.push(Statement::Immediate(i));
                Ok(())
            }
            Some(Keyword::Property) => {
                self.pos += 8;
                let p = self.property(start)?;
                statements.push(Statement::Property(p));
                Ok(())
            }
            _ => self.instruction(start, statements),
        }
    }

    /// Requires white space (after `DCL`, `IMM …`, `PROPERTY`).
    #[inline]
    fn require_ws(&mut self, after: &str) -> PResult<()> {
        if self.skip_ws() {
            return Ok(());
        }
        Err(self.expected_ws(after))
    }

    #[cold]
    fn expected_ws(&self, after: &str) -> Box<Diagnostic> {
        Box::new(
            self.error_here(
                "E0002",
                format!("expected white space after {after}, found {}", describe(self.src, self.pos)),
            )
            .with_label("expected white space"),
        )
    }

    /// A keyword at the cursor, upper-cased into `buf`.
    #[inline(always)]
    fn keyword<'b>(&mut self, buf: &'b mut [u8; 64]) -> (&'b [u8], Span) {
        let (word, span) = self.word();
        if word.len() > buf.len() {
            return (&buf[..0], span);
        }
        let n = word.len();
        if n <= 8 {
            // Word-wide: load the identifier from the text and clear bit 5 of its letters.
            let upper = ascii_upper(load8(self.src, span.start as usize) & low_bytes(n));
            buf[..8].copy_from_slice(&upper.to_le_bytes());
            debug_assert!(buf[..n].iter().zip(word).all(|(&u, w)| u == w.to_ascii_uppercase()));
            return (&buf[..n], span);
        }
        for (d, s) in buf.iter_mut().zip(word) {
            *d = s.to_ascii_uppercase();
        }
        (&buf[..n], span)
    }
}

/// Mesa's storage for a number, for range checks and the notes that say what Mesa would do.
#[derive(Clone, Copy, Debug)]
pub(super) enum Field {
    /// Register indices and offsets.
    I16,
    /// Declaration ranges, dimensions, semantic indices.
    U16,
    /// ArrayIDs.
    U10,
    /// STREAM values.
    U2,
    /// Branch labels.
    U24,
    /// Property values, immediates.
    U32,
}

impl Field {
    pub(super) fn max(self) -> u64 {
        match self {
            Field::I16 => i16::MAX as u64,
            Field::U16 => u64::from(u16::MAX),
            Field::U10 => 1023,
            Field::U2 => 3,
            Field::U24 => 0xff_ffff,
            Field::U32 => u64::from(u32::MAX),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Field::I16 => "a 16-bit signed field",
            Field::U16 => "a 16-bit field",
            Field::U10 => "a 10-bit field",
            Field::U2 => "a 2-bit field",
            Field::U24 => "a 24-bit field",
            Field::U32 => "a 32-bit field",
        }
    }

    /// What Mesa stores for `value` (its parser first wraps numbers modulo 2^32).
    fn wrap(self, value: u64) -> i64 {
        let v = value & 0xffff_ffff;
        match self {
            Field::I16 => i64::from(v as u16 as i16),
            Field::U16 => (v & 0xffff) as i64,
            Field::U10 => (v & 0x3ff) as i64,
            Field::U2 => (v & 3) as i64,
            Field::U24 => (v & 0xff_ffff) as i64,
            Field::U32 => v as i64,
        }
    }
}

/// A number that does not fit its Mesa field.
pub(super) fn out_of_range(span: Span, what: &str, value: u64, field: Field) -> Diagnostic {
    let d = Diagnostic::error("E0024", span, format!("{what} is out of range"))
        .with_label(format!("the largest allowed value is {}", field.max()));
    if value == u64::MAX {
        d.with_note(format!("Mesa stores it in {} and would silently change it", field.name()))
    } else {
        d.with_note(format!(
            "Mesa stores it in {} and would silently turn {value} into {}",
            field.name(),
            field.wrap(value)
        ))
    }
}

#[cfg(test)]
mod tests;
