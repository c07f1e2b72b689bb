//! `tgsi2va asm` (placeholder until the Valhall ISA layer lands).

use super::Global;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(args: Args, global: Global) -> ExitCode {
    let _ = (args, global);
    super::usage_error("`asm` is not available yet")
}
