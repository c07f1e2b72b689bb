//! The `tgsi2va` command-line tool. All printing and exiting happens here and in `cli/`.
#![forbid(unsafe_code)]

mod cli;

/// mimalloc instead of the system allocator: the compiler makes many small short-lived
/// allocations; the median sample compiles 6–7 % faster (README, "Dependencies").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
