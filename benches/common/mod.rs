//! Helpers shared by the benchmarks (`#[path]`-included).

#[path = "../../tests/common/files.rs"]
mod files;
pub use files::collect_tgsi;

/// The same global allocator as the `tgsi2va` binary (src/main.rs), so the benchmarks measure what
/// the CLI does.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU time used by this thread so far, in seconds (Linux `/proc/thread-self/schedstat`, in
/// ns), so that other work on a shared machine distorts measurements less; `None` elsewhere.
pub fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}
