//! `tgsi2va interp INPUT.tgsi [--inputs FILE.json | --seed N] [--save-inputs FILE.json]`: run the TGSI reference interpreter on one
//! quad and print the outputs JSON (docs/exec-formats.md).
//!
//! Exit codes: 0 on success; 1 when the shader is rejected (parse or check errors, a construct
//! the interpreter does not support, the step limit); 2 for usage errors (including an
//! unreadable or invalid inputs file).

use super::Global;
use super::batch;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;
use tgsi2va::exec::io::Inputs;
use tgsi2va::interp::{self, Options};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TGSI file, or `-` for standard input.
    input: PathBuf,

    /// Inputs JSON (registers, buffers, textures); everything not given is zero.
    #[arg(long, value_name = "FILE.json")]
    inputs: Option<PathBuf>,

    /// Generate deterministic inputs from this seed instead (see `interp::inputs`).
    #[arg(long, conflicts_with = "inputs")]
    seed: Option<u64>,

    /// Also write the inputs actually used (generated or read) to this file, as inputs JSON,
    /// so that the same run can be repeated with `--inputs` or fed to another executor.
    #[arg(long, value_name = "FILE.json")]
    save_inputs: Option<PathBuf>,

    /// Stop with an error after this many executed instructions (the name `emu` uses too;
    /// `--step-limit` is accepted as an alias).
    #[arg(long, alias = "step-limit", default_value_t = Options::default().step_limit)]
    max_steps: u64,

    /// Also print how each value must be compared ("exact", "any" or an absolute bound):
    /// values the semantics leave open are printed as placeholders otherwise.
    #[arg(long)]
    accuracy: bool,

    /// Output file (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let text = match batch::read_text(&args.input) {
        Ok(text) => text,
        Err(message) => return batch::failure(message),
    };
    let name = batch::display_name(&args.input);
    let program = match tgsi2va::tgsi::parse(&text) {
        Ok(program) => program,
        Err(errors) => return batch::failure(global.render(&errors.0, &name, &text)),
    };
    let inputs = match (&args.inputs, args.seed) {
        (Some(path), _) => {
            let json = match batch::read_text(path) {
                Ok(json) => json,
                Err(message) => return super::usage_error(message.trim_start_matches("error: ").trim_end()),
            };
            match Inputs::from_json(&json) {
                Ok(inputs) => inputs,
                Err(message) => return super::usage_error(format!("{}: {message}", path.display())),
            }
        }
        (None, Some(seed)) => interp::inputs::generate(&program, seed),
        (None, None) => Inputs::default(),
    };
    if let Some(path) = &args.save_inputs
        && let Err(message) = write_output(path, inputs.to_json().as_bytes())
    {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    let options = Options { step_limit: args.max_steps, ..Options::default() };
    match interp::run_with(&program, &inputs, &options) {
        Ok(run) => {
            let json = if args.accuracy { run.to_json_with_accuracy() } else { run.outputs.to_json() };
            match write_output(&args.output, json.as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    eprintln!("error: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => batch::failure(global.render(&error.diagnostics(), &name, &text)),
    }
}
