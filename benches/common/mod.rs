//! Helpers shared by the benchmarks (`#[path]`-included).

use std::path::{Path, PathBuf};

/// Every `*.tgsi` file under `dir`, recursively, in sorted order.
pub fn collect_tgsi(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect_tgsi(&p, out);
        } else if p.extension().is_some_and(|e| e == "tgsi") {
            out.push(p);
        }
    }
}

/// CPU time used by this thread so far, in seconds (Linux `/proc/thread-self/schedstat`, in
/// ns), so that other work on a shared machine distorts measurements less; `None` elsewhere.
pub fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}
