//! The tests' one pseudo-random generator: xorshift64* (Vigna, "An experimental exploration of
//! Marsaglia's xorshift generators, scrambled", 2016). Cheap and reproducible from a seed, which
//! is all a test needs to spread its inputs; `#[path]`-included by the tests that use it.

#![allow(dead_code)]

/// A deterministic generator; the same seed gives the same numbers on every machine.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`. Zero, the one state xorshift never leaves, becomes a fixed
    /// non-zero constant.
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed })
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The high half of the next number (the better-mixed bits of xorshift64*).
    pub fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    /// Below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// Uniform in [0, 1), 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / 2f64.powi(53)
    }
}
