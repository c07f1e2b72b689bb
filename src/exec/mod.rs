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

/// Little-endian words → bytes (memory regions and images hold bytes; the JSON formats and
/// the registers hold words).
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Little-endian bytes → words (a trailing partial word is zero-extended).
pub fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// A 32-bit avalanche hash of `words` from `seed`, the procedural models' source of texel and
/// image contents (fixed forever: golden outputs and recorded mismatches depend on it).
fn hash_words(seed: u32, words: &[u32]) -> u32 {
    let mut h = seed;
    for &w in words {
        h ^= w;
        h = h.wrapping_mul(0x85EB_CA6B);
        h ^= h >> 13;
        h = h.wrapping_mul(0xC2B2_AE35);
        h ^= h >> 16;
    }
    h
}
