//! Semantic checks (placeholder until the checker lands).

use super::ast::Program;
use crate::diag::Diagnostic;

/// Checks a parsed program; returns every error and warning found.
pub fn check(program: &Program) -> Vec<Diagnostic> {
    let _ = program;
    Vec::new()
}
