//! Diagnostics shared by every front end (TGSI parser and checker, Valhall assembler, compiler).
//!
//! A [`Diagnostic`] has a severity, a stable code (listed in `docs/diagnostics.md`), a message,
//! one primary [`Label`] (the caret) and any number of secondary labels and notes. Library code
//! only builds diagnostics; [`render`] turns them into text in one of three formats:
//!
//! * [`MessageFormat::Human`]: codespan-reporting's rich form with the source line and carets;
//! * [`MessageFormat::Short`]: `file:line:col: error[CODE]: message`, one line each;
//! * [`MessageFormat::Json`]: one JSON object per line (see `docs/diagnostics.md`).
//!
//! Spans are byte offsets into the source text; lines and columns are 1-based and columns count
//! characters, not bytes.

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use std::fmt;
use std::ops::Range;

/// A half-open byte range `[start, end)` of the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end);
        Span { start: clamp_offset(start), end: clamp_offset(end) }
    }

    /// An empty span at `offset` (a caret between two characters).
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

fn clamp_offset(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A span with a short message shown next to its caret (the message may be empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable identifier, e.g. `E0003`; see `docs/diagnostics.md`.
    pub code: &'static str,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    /// Extra lines printed after the source excerpt, e.g. `help: did you mean `MOV`?`.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, span, message)
    }

    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, span, message)
    }

    fn new(severity: Severity, code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            primary: Label { span, message: String::new() },
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sets the text shown under the primary caret.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary.message = message.into();
        self
    }

    /// Adds a secondary label (e.g. where the conflicting thing was declared).
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label { span, message: message.into() });
        self
    }

    /// Adds a `note: …` line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(format!("note: {}", note.into()));
        self
    }

    /// Adds a `help: …` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.notes.push(format!("help: {}", help.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity.as_str(), self.code, self.message)
    }
}

/// Diagnostics collected for one input; the error type of the front ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
#[error("{}", summary(.0))]
pub struct Diagnostics(pub Vec<Diagnostic>);

fn summary(diags: &[Diagnostic]) -> String {
    match diags.iter().find(|d| d.is_error()).or(diags.first()) {
        Some(first) => first.to_string(),
        None => "no diagnostics".to_string(),
    }
}

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.0.iter().filter(|d| d.is_error()).count()
    }

    pub fn warning_count(&self) -> usize {
        self.0.len() - self.error_count()
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

/// How diagnostics are printed (`--message-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MessageFormat {
    #[default]
    Human,
    Short,
    Json,
}

/// Maps byte offsets of one source text to 1-based lines and columns.
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// 1-based (line, column) of a byte offset; the column counts characters.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text.get(start..offset).map_or(offset - start, |s| s.chars().count());
        (line + 1, column + 1)
    }
}

/// Renders diagnostics for the source `text` of the file `name`. `color` adds ANSI colours to
/// the human format (for terminals); the other formats never have colour.
pub fn render(diags: &[Diagnostic], name: &str, text: &str, format: MessageFormat, color: bool) -> String {
    match format {
        MessageFormat::Human => render_codespan(diags, name, text, term::DisplayStyle::Rich, color),
        MessageFormat::Short => render_codespan(diags, name, text, term::DisplayStyle::Short, color),
        MessageFormat::Json => render_json(diags, name, text),
    }
}

fn render_codespan(diags: &[Diagnostic], name: &str, text: &str, style: term::DisplayStyle, color: bool) -> String {
    use term::termcolor::{Buffer, WriteColor};
    let file = SimpleFile::new(name, text);
    let config = term::Config { display_style: style, ..term::Config::default() };
    let mut buffer = if color { Buffer::ansi() } else { Buffer::no_color() };
    for diag in diags {
        let converted = to_codespan(diag, text.len());
        // Rendering into memory can only fail on spans outside the text, which to_codespan clamps.
        if term::emit_to_write_style(&mut buffer, &config, &file, &converted).is_err() {
            let _ = writeln!(buffer, "{name}: {diag}");
        }
        let _ = buffer.reset();
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

use std::io::Write as _;

fn to_codespan(diag: &Diagnostic, len: usize) -> cs::Diagnostic<()> {
    let clamp = |span: Span| {
        let start = (span.start as usize).min(len);
        start..(span.end as usize).clamp(start, len)
    };
    let severity = match diag.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut labels = vec![cs::Label::primary((), clamp(diag.primary.span)).with_message(&diag.primary.message)];
    labels.extend(diag.secondary.iter().map(|l| cs::Label::secondary((), clamp(l.span)).with_message(&l.message)));
    cs::Diagnostic::new(severity)
        .with_code(diag.code)
        .with_message(&diag.message)
        .with_labels(labels)
        .with_notes(diag.notes.clone())
}

fn render_json(diags: &[Diagnostic], name: &str, text: &str) -> String {
    let index = LineIndex::new(text);
    let position = |span: Span, message: &str| {
        let (line, column) = index.line_col(span.start as usize);
        let (end_line, end_column) = index.line_col(span.end as usize);
        serde_json::json!({
            "line": line, "column": column, "end_line": end_line, "end_column": end_column,
            "message": message,
        })
    };
    let mut out = String::new();
    for diag in diags {
        let primary = position(diag.primary.span, &diag.primary.message);
        let value = serde_json::json!({
            "file": name,
            "severity": diag.severity.as_str(),
            "code": diag.code,
            "message": diag.message,
            "line": primary["line"],
            "column": primary["column"],
            "end_line": primary["end_line"],
            "end_column": primary["end_column"],
            "labels": std::iter::once(primary.clone())
                .chain(diag.secondary.iter().map(|l| position(l.span, &l.message)))
                .collect::<Vec<_>>(),
            "notes": diag.notes,
        });
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "FRAG\nDCL TEMP[0]\nMOVE TEMP[0], TEMP[1]\n";

    fn sample() -> Diagnostic {
        Diagnostic::error("E0003", Span::new(17, 21), "unknown opcode `MOVE`")
            .with_label("not an opcode")
            .with_help("did you mean `MOV`?")
    }

    #[test]
    fn line_index_counts_characters() {
        let index = LineIndex::new("ab\nçd\n");
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_col(3), (2, 1));
        assert_eq!(index.line_col(5), (2, 2), "ç is two bytes but one column");
        assert_eq!(index.line_col(100), (3, 1));
    }

    #[test]
    fn human_format_has_caret_and_help() {
        let text = render(&[sample()], "a.tgsi", SOURCE, MessageFormat::Human, false);
        let expected = "\
error[E0003]: unknown opcode `MOVE`
  ┌─ a.tgsi:3:1
  │
3 │ MOVE TEMP[0], TEMP[1]
  │ ^^^^ not an opcode
  │
  = help: did you mean `MOV`?

";
        assert_eq!(text, expected);
    }

    #[test]
    fn short_format_is_one_line() {
        let text = render(&[sample()], "a.tgsi", SOURCE, MessageFormat::Short, false);
        assert_eq!(text, "a.tgsi:3:1: error[E0003]: unknown opcode `MOVE`\n");
    }

    #[test]
    fn json_format_has_positions() {
        let text = render(&[sample()], "a.tgsi", SOURCE, MessageFormat::Json, false);
        let value: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(value["code"], "E0003");
        assert_eq!(value["line"], 3);
        assert_eq!(value["column"], 1);
        assert_eq!(value["end_column"], 5);
        assert_eq!(value["notes"][0], "help: did you mean `MOV`?");
    }

    #[test]
    fn spans_past_the_end_are_clamped() {
        let diag = Diagnostic::error("E0001", Span::new(1000, 2000), "unexpected end of input");
        let text = render(&[diag], "a.tgsi", SOURCE, MessageFormat::Human, false);
        assert!(text.starts_with("error[E0001]: unexpected end of input"), "{text}");
    }
}
