//! `tgsi2va disasm [INPUT|-] [--hex] [--each] [-o OUT|-]`: disassemble Valhall binary.
//!
//! Without options the output is Mesa's listing: each instruction indented by three spaces, a
//! blank line after each branch, stopping at the first all-zero word, and a final blank line.
//! `--hex` prefixes each line with the instruction's eight bytes (Mesa's verbose format, the
//! format of the encoding vectors). `--each` prints exactly one line per 64-bit word (no indent,
//! no blank lines) and does not stop at zero words.
//!
//! A word that is not an instruction prints as `<undecodable> ; reason`, is reported on standard
//! error with its byte offset, and makes the exit code 1 (the listing is still written in full).
//! Trailing bytes that do not form a whole word are reported the same way.

use super::Global;
use super::batch;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;
use tgsi2va::valhall::disasm::{ListingOptions, listing};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Binary file of little-endian 64-bit words, or `-` for standard input (the default).
    #[arg(default_value = "-")]
    input: PathBuf,

    /// Prefix each line with the instruction's bytes (`xx xx xx xx xx xx xx xx    TEXT`).
    #[arg(long)]
    hex: bool,

    /// One line per 64-bit word; do not stop at all-zero words.
    #[arg(long)]
    each: bool,

    /// Output file (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

pub fn run(args: Args, _global: Global) -> ExitCode {
    let bytes = match batch::read_bytes(&args.input) {
        Ok(bytes) => bytes,
        Err(message) => return batch::failure(message),
    };
    let name = batch::display_name(&args.input);
    let result = listing(&bytes, ListingOptions { hex: args.hex, each: args.each });
    let mut failed = false;
    for offset in &result.undecodable {
        eprintln!("error: {name}: the word at byte offset {offset:#x} is not a Valhall instruction");
        failed = true;
    }
    if result.trailing_bytes != 0 {
        eprintln!(
            "error: {name}: {} trailing byte(s) do not form a 64-bit instruction word and were ignored",
            result.trailing_bytes
        );
        failed = true;
    }
    if let Err(message) = write_output(&args.output, result.text.as_bytes()) {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
