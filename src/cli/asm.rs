//! `tgsi2va asm [INPUT|-] [-o OUT|-]`: assemble Mesa-syntax Valhall assembly into binary.
//!
//! One instruction per line; blank lines and `#` comments are skipped and leading white space is
//! ignored. Every failing line is reported with its line, column and a caret; then the exit code
//! is 1 and no output is written (no partial file). The output is the little-endian 64-bit words.

use super::Global;
use super::batch;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Assembly file, or `-` for standard input (the default).
    #[arg(default_value = "-")]
    input: PathBuf,

    /// Output file for the binary (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let text = match batch::read_text(&args.input) {
        Ok(text) => text,
        Err(message) => return batch::failure(message),
    };
    let name = batch::display_name(&args.input);
    let words = match tgsi2va::valhall::assemble(&text) {
        Ok(words) => words,
        Err(errors) => return batch::failure(global.render(&errors.0, &name, &text)),
    };
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    match write_output(&args.output, &bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
