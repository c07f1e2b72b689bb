//! TGSI printer (placeholder until the printer lands).

use super::ast::Program;

/// Printer options.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print FLT32 immediates as `0x%08x` bit patterns (Mesa's `TGSI_DUMP_FLOAT_AS_HEX`).
    pub float_as_hex: bool,
}

/// Prints a program in Mesa's dump format.
pub fn print(program: &Program) -> String {
    print_with(program, PrintOptions::default())
}

/// Prints a program with options.
pub fn print_with(program: &Program, options: PrintOptions) -> String {
    let _ = (program, options);
    String::new()
}
