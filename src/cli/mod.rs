//! Command-line interface: argument parsing (clap) and one module per command.
//!
//! Contract (docs/cli.md): exit code 0 on success, 1 when an input is rejected, 2 for usage
//! errors, 101 for internal errors (a panic, reported with the input's name).

mod asm;
mod batch;
mod check;
mod compile;
mod disasm;
mod emu;
mod fmt;
mod interp;
mod isa;
mod output;
mod verify;

use clap::{Parser, Subcommand, ValueEnum};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::process::ExitCode;
use tgsi2va::diag::{Diagnostic, MessageFormat};

#[derive(Parser, Debug)]
#[command(name = "tgsi2va", version, about = "Gallium TGSI → Arm Mali Valhall compiler and tools")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,

    /// How diagnostics are printed.
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Human)]
    message_format: FormatArg,

    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile TGSI shaders to Valhall blobs (with metadata), listings or C arrays.
    Compile(compile::Args),
    /// Parse and check TGSI shaders (files or directories of *.tgsi).
    Check(check::Args),
    /// Print a TGSI shader in canonical form (Mesa's dump format).
    Fmt(fmt::Args),
    /// Assemble Valhall assembly (Mesa syntax) into binary.
    Asm(asm::Args),
    /// Disassemble Valhall binary into Mesa-syntax assembly.
    Disasm(disasm::Args),
    /// Show the Valhall ISA tables, or generate the HTML reference.
    Isa(isa::Args),
    /// Run the TGSI reference interpreter on one quad; print the outputs as JSON.
    Interp(interp::Args),
    /// Run a compiled blob on the Valhall emulator and print its outputs.
    Emu(emu::Args),
    /// Compile, then compare the interpreter with the emulator on generated inputs.
    Verify(verify::Args),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Human,
    Short,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

/// Options shared by every command.
#[derive(Clone, Copy, Debug)]
pub struct Global {
    pub message_format: MessageFormat,
    pub color: bool,
}

impl Global {
    /// Renders diagnostics for one input in the chosen format.
    pub fn render(&self, diags: &[Diagnostic], name: &str, text: &str) -> String {
        tgsi2va::diag::render(diags, name, text, self.message_format, self.color)
    }
}

pub fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let global = Global {
        message_format: match cli.message_format {
            FormatArg::Human => MessageFormat::Human,
            FormatArg::Short => MessageFormat::Short,
            FormatArg::Json => MessageFormat::Json,
        },
        color: match cli.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        },
    };
    match cli.command {
        Command::Compile(args) => compile::run(args, global),
        Command::Check(args) => check::run(args, global),
        Command::Fmt(args) => fmt::run(args, global),
        Command::Asm(args) => asm::run(args, global),
        Command::Disasm(args) => disasm::run(args, global),
        Command::Isa(args) => isa::run(args, global),
        Command::Interp(args) => interp::run(args, global),
        Command::Emu(args) => emu::run(args, global),
        Command::Verify(args) => verify::run(args, global),
    }
}

/// A usage error: message on stderr, exit code 2.
pub fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

thread_local! {
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics are reported by the batch runner with the input's name; the hook only remembers
/// where the panic happened so the report can say it.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line()));
        PANIC_LOCATION.with(|cell| *cell.borrow_mut() = location);
    }));
}

pub fn take_panic_location() -> Option<String> {
    PANIC_LOCATION.with(|cell| cell.borrow_mut().take())
}
