//! `tgsi2va isa [NAME] [--html] [-o OUT|-]`: the Valhall ISA tables.
//!
//! Without a name: one line per instruction (mnemonic, primary and secondary opcode, unit,
//! description). With a name (case-insensitive mnemonic): that instruction's encoding, operands
//! and modifiers. `--html` writes the self-contained HTML reference (docs/isa.html).

use super::Global;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;
use tgsi2va::valhall::{Opcode, reference};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// An instruction mnemonic, e.g. `FADD.f32` (case-insensitive).
    name: Option<String>,

    /// Write the HTML reference of the whole ISA instead.
    #[arg(long, conflicts_with = "name")]
    html: bool,

    /// Output file (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

pub fn run(args: Args, _global: Global) -> ExitCode {
    let text = if args.html {
        reference::html()
    } else if let Some(name) = &args.name {
        let found = Opcode::from_name(name)
            .or_else(|| Opcode::ALL.iter().copied().find(|op| op.name().eq_ignore_ascii_case(name)));
        match found {
            Some(op) => reference::describe(op),
            None => {
                let similar: Vec<&str> = Opcode::ALL
                    .iter()
                    .map(|op| op.name())
                    .filter(|n| n.to_ascii_lowercase().contains(&name.to_ascii_lowercase()))
                    .take(8)
                    .collect();
                eprintln!("error: no instruction named `{name}`");
                if !similar.is_empty() {
                    eprintln!("help: similar names: {}", similar.join(", "));
                }
                return ExitCode::FAILURE;
            }
        }
    } else {
        reference::list()
    };
    match write_output(&args.output, text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
