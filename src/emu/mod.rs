//! The Valhall emulator: runs compiled blobs on a quad of four lanes, exactly, and checks the
//! hardware's flow rules while doing so. docs/emulator.md is the specification.
//!
//! ```text
//! blob + Metadata + Inputs ──abi::run──► per variant: Program::from_bytes (strict decode)
//!        │                                           │
//!        └── abi::prepare: FAU, memory, preloads ──► Machine::run ──► captures ──► Outputs
//! ```
//!
//! * [`run`] is the whole job: every variant the metadata describes (IDVS vertex shaders run
//!   their position and varying variants on the same inputs), outputs mapped back to TGSI
//!   `OUT[i]` registers in the format of the TGSI interpreter (`exec::io::Outputs`).
//! * [`Machine`] and [`Program`] are the lower level: prepare registers, uniforms, memory and
//!   environment by hand, run one program, inspect the registers.
//!
//! The machine model: a warp of four lanes (one 2×2 quad, lane bit 0 = x, bit 1 = y; the
//! subgroup operations `CLPER` and `WMASK` see these four lanes and treat lanes 4–15 of larger
//! subgroups as inactive), 64 32-bit registers per lane, 128 FAU words, the immediate table,
//! special FAU values, byte-addressed memory regions, and per-lane program counters with
//! lowest-PC-first scheduling. Every value is an exact bit pattern; every message executes when
//! it issues, and the scoreboard only decides when its results may be *used*.
//!
//! ```
//! use tgsi2va::emu::{Machine, Program, Stage};
//!
//! let program = Program::assemble("FADD.f32.end r0, r1, r2")?;
//! let mut m = Machine::new(Stage::Compute);
//! m.set_reg_all(1, 1.5f32.to_bits());
//! m.set_reg_all(2, 2.25f32.to_bits());
//! m.run(&program)?;
//! assert_eq!(m.reg(0), [3.75f32.to_bits(); 4]);
//! # Ok::<(), tgsi2va::emu::EmuError>(())
//! ```

mod abi;
mod alu;
mod error;
mod exec;
pub mod fp;
mod fragment;
pub mod image;
mod machine;
pub mod memory;
mod message;
pub mod sfu;
mod tex;

pub use abi::{load_variant, prepare, run, run_with, texture_for_target};
pub use alu::{ConstEvaluator, is_signed};
pub use error::{EmuError, ErrorKind};
pub use machine::{
    ATEST_DATUM, AttributeData, BLEND_DESCRIPTOR_TAG, Capture, DEFAULT_MAX_STEPS, Env, Inst, Machine, Options, Program,
    REGS, Stage, Status, VaryingData, decode_word, wait_mask,
};
