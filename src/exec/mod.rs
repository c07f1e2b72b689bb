//! Shared ground of the two executors, the TGSI reference interpreter and the Valhall
//! emulator: the quad of invocations they run, the input/output JSON formats ([`io`]) and the
//! procedural texture model ([`texture`]). Both executors produce [`io::Outputs`], so their
//! results compare directly.

pub mod framebuffer;
pub mod image;
pub mod io;
pub mod texture;

/// Invocations run together: one 2×2 quad (lane bit 0 = x, bit 1 = y).
pub const LANES: usize = 4;

/// One 32-bit value per component.
pub type Vec4 = [u32; 4];

/// A register's value in every lane of the quad.
pub type Lanes = [Vec4; LANES];
