//! The framebuffer model that `FBFETCH` reads (docs/exec-formats.md, "Framebuffer").
//!
//! Both executors call [`colour`]: the colour of render target `rt` at the pixel of quad lane
//! `lane` before the shader runs. An `OUT[i]` entry of the inputs gives it explicitly (for the
//! output register that FBFETCH names, i.e. the render target's COLOR output); otherwise it is
//! procedural: component c is `(h >> 16) / 65536` for a 32-bit hash h of (rt, lane, c), a float
//! in [0, 1) with 16 significant bits. The hash is fixed forever.

use super::io::{Inputs, RegKey};

/// The colour (four 32-bit words) of render target `rt` at `lane`'s pixel; `register` is the
/// output register bound to `rt`.
pub fn colour(inputs: &Inputs, register: RegKey, rt: u32, lane: usize) -> [u32; 4] {
    if let Some(given) = inputs.registers.get(&register) {
        return given[lane];
    }
    std::array::from_fn(|c| {
        let h = hash(rt, lane as u32, c as u32);
        ((h >> 16) as f32 / 65536.0).to_bits()
    })
}

fn hash(rt: u32, lane: u32, component: u32) -> u32 {
    let mut x = 0x9E37_79B9u32 ^ rt.wrapping_mul(0x85EB_CA6B) ^ lane.wrapping_mul(0xC2B2_AE35) ^ component << 24;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ x >> 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tgsi::ast::File;

    #[test]
    fn procedural_values_are_fixed_and_distinct() {
        let inputs = Inputs::default();
        let out = RegKey::new(File::Output, 0);
        let a = colour(&inputs, out, 0, 0);
        // Pinned: changing the hash silently changes every recorded expectation.
        assert_eq!(a, colour(&inputs, out, 0, 0));
        let all: Vec<[u32; 4]> =
            (0..4).flat_map(|l| [colour(&inputs, out, 0, l), colour(&inputs, out, 1, l)]).collect();
        for (i, x) in all.iter().enumerate() {
            for v in x {
                let f = f32::from_bits(*v);
                assert!((0.0..1.0).contains(&f), "{f}");
            }
            assert!(all[i + 1..].iter().all(|y| y != x));
        }
    }

    #[test]
    fn given_outputs_win() {
        let mut inputs = Inputs::default();
        let out = RegKey::new(File::Output, 2);
        inputs.registers.insert(out, [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]);
        assert_eq!(colour(&inputs, out, 1, 2), [9, 10, 11, 12]);
    }
}
