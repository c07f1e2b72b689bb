//! The `tgsi2va` command-line tool. All printing and exiting happens here and in `cli/`.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
