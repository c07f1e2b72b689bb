//! Writing command output without ever leaving a partial file behind.
//!
//! A regular file is written to a temporary name in its own directory and renamed into place, so
//! a failure leaves no partial output. Renaming must never replace something that is not a
//! regular file: `-o /dev/null` (or a FIFO, or a terminal) is written in place, and a symbolic
//! link is followed so that the link survives and its target receives the output.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` (`-` is standard output).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .map_err(|e| format!("cannot write standard output: {e}"));
    }
    if is_special_file(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut file| file.write_all(bytes))
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let target = regular_target(path);
    let file_name = target.file_name().ok_or_else(|| format!("{} is not a file name", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = target.with_file_name(temp_name);
    let result = std::fs::write(&temp, bytes).and_then(|_| std::fs::rename(&temp, &target));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

/// True when `path` names an existing file that is not a regular file (a device such as
/// `/dev/null`, a FIFO, a socket): output goes into it as is, and nothing is written beside it.
pub fn is_special_file(path: &Path) -> bool {
    path != Path::new("-") && std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The path whose directory entry the rename replaces: the final target of a symbolic link that
/// leads to a regular file, otherwise `path` itself.
fn regular_target(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match std::fs::canonicalize(path) {
        Ok(real) if is_link => real,
        _ => path.to_path_buf(),
    }
}
