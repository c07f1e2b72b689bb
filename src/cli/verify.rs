//! `tgsi2va verify INPUT...|DIR [--seeds N] [--first-seed S] [--gpu G]`: compile each shader
//! and compare the TGSI interpreter with the Valhall emulator on generated inputs.
//!
//! A shader passes when every compared output component agrees (docs/verification.md); the
//! first differences of a failing shader are printed. Shaders that do not compile, or that the
//! executors cannot run, fail with the reason. A shader whose interpreter run reaches the step
//! limit is inconclusive (exit status 3 when nothing failed). Ends with `N passed, N failed`
//! (`, N inconclusive` when there are such).

use super::Global;
use super::batch::{self, Outcome};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tgsi2va::lower::Gpu;
use tgsi2va::verify::{self, Error, Options};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TGSI files or directories (searched for *.tgsi).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// Input sets per shader.
    #[arg(long, default_value_t = 4)]
    seeds: u32,

    /// Seed of the first input set.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,

    /// Target: v9, v10, G57, Mali-G610, …
    #[arg(long, default_value = "v9", value_parser = |t: &str| Gpu::parse(t).ok_or(format!("unknown GPU `{t}`")))]
    gpu: Gpu,

    /// Differences to print per failing shader.
    #[arg(long, default_value_t = 1)]
    show: usize,
}

pub fn run(args: Args, global: Global) -> ExitCode {
    let inputs = match batch::collect_inputs(&args.inputs, "tgsi") {
        Ok(inputs) => inputs,
        Err(message) => return super::usage_error(message),
    };
    batch::run(&inputs, true, |path| verify_one(path, &args, global))
}

fn verify_one(path: &Path, args: &Args, global: Global) -> Outcome {
    let text = match batch::read_text(path) {
        Ok(text) => text,
        Err(message) => return Outcome::fail(message),
    };
    let name = batch::display_name(path);
    let options = Options { seeds: args.seeds, first_seed: args.first_seed, gpu: args.gpu };
    match verify::verify(&text, &options) {
        Ok(report) if report.passed() => Outcome::pass_quiet(),
        Ok(report) => {
            let mut out =
                format!("{name}: {} of {} compared components differ\n", report.mismatches.len(), report.compared);
            for m in report.mismatches.iter().take(args.show.max(1)) {
                let _ = writeln!(out, "  {m}");
            }
            Outcome::fail(out)
        }
        Err(Error::Compile(diags)) => Outcome::fail(format!(
            "{name}: cannot be verified: it does not compile\n{}",
            global.render(&diags.0, &name, &text)
        )),
        Err(e @ Error::Inconclusive { .. }) => {
            Outcome { inconclusive: true, ..Outcome::fail(format!("{name}: {e}\n")) }
        }
        Err(e) => Outcome::fail(format!("{name}: cannot be verified: {e}\n")),
    }
}
