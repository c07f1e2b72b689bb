//! tgsi2va: Gallium TGSI → Arm Mali Valhall (v9/v10) machine code.
//!
//! ```text
//! isa/valhall.isa ─build.rs─► valhall::tables ─► encode · decode · asm · disasm · emu · stats · docs
//!
//! .tgsi ─tgsi::parse─► Ast ─tgsi::check─► Ast ─lower─► ir (scalar SSA) ─opt::*─► ir ─legalize─►
//!       ─regalloc─► machine code (phys regs) ─flow─► encode ─► emit: blob + metadata + stats
//!        │                                                        │
//!    interp::run ◄──────────── compare (differential tests) ──────► emu::run(decode(blob))
//! ```
//!
//! Every arrow is one module's public function. Library code never prints or exits: it returns
//! values or [`diag::Diagnostics`]; only the `tgsi2va` binary talks to the terminal.
#![forbid(unsafe_code)]

pub mod compile;
pub mod diag;
pub mod emit;
pub mod emu;
pub mod exec;
pub mod flow;
pub mod interp;
pub mod ir;
pub mod legalize;
pub mod lower;
pub mod opt;
pub mod regalloc;
mod reuse;
pub mod tgsi;
pub mod valhall;
pub mod verify;

/// Helpers shared by the library's unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    /// Every `.tgsi` file under `tgsi-samples/`, sorted.
    pub fn sample_files() -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tgsi-samples"))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).expect("tgsi-samples is readable") {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "tgsi") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }
}
