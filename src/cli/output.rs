//! Writing command output without ever leaving a partial file behind.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` (`-` is standard output). A file is written to a temporary name in
/// the same directory and renamed into place, so a failure leaves no partial output.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .map_err(|e| format!("cannot write standard output: {e}"));
    }
    let file_name = path.file_name().ok_or_else(|| format!("{} is not a file name", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let result = std::fs::write(&temp, bytes).and_then(|_| std::fs::rename(&temp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}
