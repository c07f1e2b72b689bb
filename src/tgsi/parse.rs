//! TGSI text parser (placeholder until the nom parser lands).

use super::ast::Program;
use crate::diag::{Diagnostic, Diagnostics, Span};

/// Parses TGSI text into a program, or returns every syntax error found.
pub fn parse(text: &str) -> Result<Program, Diagnostics> {
    let _ = text;
    Err(Diagnostic::error("E0000", Span::at(0), "the TGSI parser is not implemented yet").into())
}
