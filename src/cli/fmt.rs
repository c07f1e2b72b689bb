//! `tgsi2va fmt INPUT`: print a TGSI shader in canonical form (Mesa's dump format).

use super::Global;
use super::batch;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;
use tgsi2va::tgsi::{self, PrintOptions};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TGSI file, or `-` for standard input.
    input: PathBuf,

    /// Output file (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,

    /// Print FLT32 immediates as bit patterns (`0x3f800000`), which is lossless.
    #[arg(long)]
    float_hex: bool,
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let text = match batch::read_text(&args.input) {
        Ok(text) => text,
        Err(message) => return batch::failure(message),
    };
    let name = batch::display_name(&args.input);
    let program = match tgsi::parse(&text) {
        Ok(program) => program,
        Err(errors) => return batch::failure(global.render(&errors.0, &name, &text)),
    };
    let printed = tgsi::print_with(&program, PrintOptions { float_as_hex: args.float_hex, ..PrintOptions::default() });
    match write_output(&args.output, printed.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
