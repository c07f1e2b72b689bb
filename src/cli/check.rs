//! `tgsi2va check INPUT...|DIR`: parse and check TGSI shaders.

use super::Global;
use super::batch::{self, Outcome};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TGSI files, directories (searched for *.tgsi) or `-` for standard input.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// Treat warnings as errors.
    #[arg(long)]
    deny_warnings: bool,
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let inputs = match batch::collect_inputs(&args.inputs, "tgsi") {
        Ok(inputs) => inputs,
        Err(message) => return super::usage_error(message),
    };
    batch::run(&inputs, true, |path| check_one(path, &args, global))
}

fn check_one(path: &Path, args: &Args, global: Global) -> Outcome {
    let text = match batch::read_text(path) {
        Ok(text) => text,
        Err(message) => return Outcome::fail(message),
    };
    let name = batch::display_name(path);
    let diagnostics = match tgsi2va::tgsi::parse(&text) {
        Ok(program) => tgsi2va::tgsi::check(&program),
        Err(errors) => errors.0,
    };
    let failed = diagnostics.iter().any(|d| d.is_error() || args.deny_warnings);
    let stderr = if diagnostics.is_empty() { String::new() } else { global.render(&diagnostics, &name, &text) };
    Outcome { passed: !failed, stderr, ..Outcome::default() }
}
