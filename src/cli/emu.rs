//! `tgsi2va emu BLOB [--meta META.json] [--inputs FILE.json] [-o OUT]`: run a compiled blob on
//! the Valhall emulator and print the outputs JSON of `tgsi2va interp` (docs/emulator.md).
//!
//! Exit codes: 0 success; 1 when an input cannot be read or parsed, or the emulator reports an
//! error (decode failure, flow-rule violation, fault, unmodelled instruction — printed on
//! standard error with the instruction index and text); 2 for usage errors.

use super::Global;
use super::batch;
use super::output::write_output;
use std::path::PathBuf;
use std::process::ExitCode;
use tgsi2va::emit::meta::Metadata;
use tgsi2va::emu::{self, DEFAULT_MAX_STEPS, Options};
use tgsi2va::exec::io::Inputs;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The compiled blob (`-` for standard input).
    blob: PathBuf,

    /// The blob's metadata (default: BLOB with the extension `.json`).
    #[arg(long)]
    meta: Option<PathBuf>,

    /// Inputs JSON (docs/exec-formats.md); without it every input is zero.
    #[arg(long)]
    inputs: Option<PathBuf>,

    /// Output file (`-` for standard output, the default).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,

    /// Instructions to issue before reporting an infinite loop.
    #[arg(long, default_value_t = DEFAULT_MAX_STEPS)]
    max_steps: u64,

    /// Read never-written registers as zero instead of reporting them.
    #[arg(long)]
    allow_undefined: bool,
}

pub fn run(args: Args, _global: Global) -> ExitCode {
    let meta_path = match &args.meta {
        Some(p) => p.clone(),
        None if args.blob.as_os_str() == "-" => {
            return super::usage_error("--meta is required when the blob is read from standard input");
        }
        None => args.blob.with_extension("json"),
    };
    let blob = match batch::read_bytes(&args.blob) {
        Ok(b) => b,
        Err(message) => return batch::failure(message),
    };
    let meta = match batch::read_text(&meta_path)
        .and_then(|t| Metadata::from_json(&t).map_err(|e| format!("error: {}: {e}\n", batch::display_name(&meta_path))))
    {
        Ok(m) => m,
        Err(message) => return batch::failure(message),
    };
    let inputs = match &args.inputs {
        None => Inputs::default(),
        Some(path) => match batch::read_text(path)
            .and_then(|t| Inputs::from_json(&t).map_err(|e| format!("error: {}: {e}\n", batch::display_name(path))))
        {
            Ok(i) => i,
            Err(message) => return batch::failure(message),
        },
    };
    let options = Options { max_steps: args.max_steps, allow_undefined: args.allow_undefined, ..Options::default() };
    match emu::run_with(&blob, &meta, &inputs, options) {
        Ok(outputs) => match write_output(&args.output, outputs.to_json().as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => batch::failure(format!("error: {message}")),
        },
        Err(e) => batch::failure(format!("error: {}: {e}", batch::display_name(&args.blob))),
    }
}
