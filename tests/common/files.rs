//! The shader walk shared by tests and benchmarks (`#[path]`-included where needed, so a crate
//! that uses only this does not compile the other helpers).

use std::path::{Path, PathBuf};

/// Appends every `*.tgsi` file under `dir`, recursively, in sorted order. An unreadable
/// directory is a failed test, not an empty list.
pub fn collect_tgsi(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("directory entry").path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect_tgsi(&p, out);
        } else if p.extension().is_some_and(|e| e == "tgsi") {
            out.push(p);
        }
    }
}
