//! The back end's entry point and the blob layout.
//!
//! [`compile`] takes one verified, legalised IR program (one variant) to machine code:
//!
//! ```text
//! ir::Shader ─regalloc::allocate─► MachShader ─flow::run─► MachShader ─encode─► code + VariantInfo
//! ```
//!
//! [`link`] lays several variants out in one blob: each starts on a 128-byte boundary and is
//! followed by zero bytes up to `ALIGN(size + 16, 128)`; an empty program stays empty (no
//! padding, no `NOP.end`).

use crate::emit::meta;
use crate::emit::stats;
use crate::flow;
use crate::ir::Shader;
use crate::regalloc::{self, MachShader};
use crate::valhall;

/// Back-end options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub regalloc: regalloc::Options,
}

/// A back-end failure: the input breaks the post-legalisation contract, or cannot be
/// allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    RegAlloc(#[from] regalloc::Error),
    #[error("encoding: {0}")]
    Encode(String),
}

/// What the driver needs to know about one compiled variant (besides its code).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantInfo {
    /// 32 or 64 (the "register allocation" field of the program descriptor).
    pub work_registers: u32,
    /// Registers the hardware must preload (r48–r63), ascending.
    pub preload: Vec<u8>,
    pub stats: meta::Stats,
    /// Bytes of thread-local storage per thread (spills plus the caller's `tls_base`).
    pub tls_size: u32,
}

/// A compiled variant with its listing.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The code without padding.
    pub code: Vec<u8>,
    pub info: VariantInfo,
    /// The final machine program (branches resolved, flow set).
    pub mach: MachShader,
}

impl Compiled {
    /// The program in Mesa's assembly syntax, one instruction per line.
    pub fn assembly(&self) -> String {
        let mut out = String::new();
        for b in &self.mach.blocks {
            for i in &b.insts {
                out.push_str(&valhall::print(&i.instr));
                out.push('\n');
            }
        }
        out
    }
}

/// Compiles one variant: register allocation, flow control, encoding. `shader` must satisfy the
/// post-legalisation contract (`docs/backend.md`, "Input contract"). Returns the code without
/// padding (empty for an empty program) and its description.
pub fn compile(shader: &Shader, options: &Options) -> Result<(Vec<u8>, VariantInfo), Error> {
    let c = compile_full(shader, options)?;
    Ok((c.code, c.info))
}

/// [`compile`], keeping the machine program (for listings and tests).
pub fn compile_full(shader: &Shader, options: &Options) -> Result<Compiled, Error> {
    finish(regalloc::allocate(shader, &options.regalloc)?)
}

/// The part of [`compile_full`] after register allocation: flow control and encoding.
pub fn finish(alloc: regalloc::Allocation) -> Result<Compiled, Error> {
    let mut mach = alloc.mach;
    if mach.inst_count() == 0 && mach.blocks.iter().all(|b| !matches!(b.term, regalloc::MachTerm::Branch { .. })) {
        // An empty program stays empty: no `NOP.end`, no padding (§A.8).
        let info = VariantInfo {
            work_registers: 32,
            preload: Vec::new(),
            stats: stats::stats(stats::Counts::default(), 0, 0, 32, mach.loops, 0, 0),
            tls_size: mach.tls_size,
        };
        return Ok(Compiled { code: Vec::new(), info, mach });
    }
    flow::run(&mut mach, Some(&alloc.shader));
    let (code, counts) = resolve_and_encode(&mut mach)?;
    let s = stats::stats(
        counts,
        (code.len() / 8) as u32,
        code.len() as u32,
        mach.work_registers,
        mach.loops,
        mach.spills,
        mach.fills,
    );
    let preload = (0..16u8).filter(|k| mach.preload & (1 << k) != 0).map(|k| 48 + k).collect();
    let info = VariantInfo { work_registers: mach.work_registers, preload, stats: s, tls_size: mach.tls_size };
    Ok(Compiled { code, info, mach })
}

/// Writes the offset of every materialised branch (instructions, relative to the next one),
/// encodes every instruction (little-endian 64-bit words, no padding) and counts the units of
/// the statistics: one walk over the final instructions.
fn resolve_and_encode(mach: &mut MachShader) -> Result<(Vec<u8>, stats::Counts), Error> {
    let mut start = Vec::with_capacity(mach.blocks.len() + 1);
    let mut n = 0usize;
    for b in &mach.blocks {
        start.push(n);
        n += b.insts.len();
    }
    start.push(n);
    let mut counts = stats::Counts::default();
    // Sized once, then written word by word (no capacity check per instruction).
    let mut code = vec![0u8; n * 8];
    let mut words = code.chunks_exact_mut(8);
    let mut index = 0usize;
    for b in &mut mach.blocks {
        for (mi, out) in b.insts.iter_mut().zip(&mut words) {
            if let Some(t) = mi.target {
                let offset = start[t] as i64 - (index as i64 + 1);
                mi.instr.set_imm("offset", offset).map_err(|e| Error::Encode(e.to_string()))?;
            }
            let instr = &mi.instr;
            let word = valhall::encode::encode_emitted(instr)
                .map_err(|e| Error::Encode(format!("{e} in `{}`", valhall::print(instr))))?;
            out.copy_from_slice(&word.to_le_bytes());
            counts.add(instr);
            index += 1;
        }
    }
    Ok((code, counts))
}

/// Size of a program with its padding: `ALIGN(size + 16, 128)`, 0 for an empty program.
pub fn padded_size(size: usize) -> usize {
    if size == 0 { 0 } else { (size + 16).div_ceil(128) * 128 }
}

/// Lays out variants (name, unpadded code, info) in one blob and describes them.
pub fn link(variants: &[(&str, &[u8], &VariantInfo)]) -> (Vec<u8>, Vec<meta::Variant>) {
    let mut blob = Vec::new();
    let mut described = Vec::with_capacity(variants.len());
    for (name, code, info) in variants {
        let offset = blob.len() as u32;
        blob.extend_from_slice(code);
        blob.resize(offset as usize + padded_size(code.len()), 0);
        described.push(meta::Variant {
            name: (*name).to_string(),
            offset,
            size: code.len() as u32,
            work_registers: info.work_registers,
            preload: info.preload.clone(),
            stats: info.stats,
        });
    }
    (blob, described)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding() {
        assert_eq!(padded_size(0), 0);
        assert_eq!(padded_size(8), 128);
        assert_eq!(padded_size(112), 128);
        assert_eq!(padded_size(113), 256);
        let info = VariantInfo::default();
        let a = vec![1u8; 120];
        let (blob, vars) = link(&[("position", &a, &info), ("empty", &[], &info), ("varying", &a[..8], &info)]);
        assert_eq!(blob.len(), 256 + 128);
        assert_eq!((vars[0].offset, vars[1].offset, vars[2].offset), (0, 256, 256));
        assert!(blob[120..256].iter().all(|&b| b == 0));
    }
}
