//! The TGSI front end: text → [`ast::Program`] → checked program, and back to text.
//!
//! * [`parse`] reads every construct of Mesa 25.0.7's `tgsi_text.c` plus the legacy syntax of
//!   older Mesa releases (docs/tgsi-text-format.md), with spanned diagnostics;
//! * [`print`] writes Mesa's `tgsi_dump` format byte for byte;
//! * [`check`] adds semantic checks (declarations, operand counts, stages, nesting, …);
//! * [`opcodes`] is the single opcode table every later stage consults.

pub mod ast;
pub mod check;
pub mod formats;
pub mod opcodes;
pub mod parse;
pub mod print;

pub use check::check;
pub use parse::parse;
pub use print::{PrintOptions, print, print_with};
