//! The procedural texture model shared by the TGSI interpreter and the Valhall emulator.
//!
//! Neither executor has real image data, so both sample the same deterministic function of the
//! texture unit, level, layer and integer texel coordinates. The model is defined by this file
//! alone (docs/exec-formats.md restates it):
//!
//! * **Texels** come from a hash of (seed, level, layer/face, x, y, z, component), with the
//!   sample index appended for multisample textures (`samples > 1`, 2D with one level; the
//!   default texture of a multisample target has [`DEFAULT_SAMPLES`]). Float and UNORM
//!   textures hold multiples of 1/65536 in [0, 1); SINT and UINT textures hold the raw 32-bit
//!   hash. Samples past the last one read zeros.
//! * **Filtering** is nearest only, with clamp-to-edge addressing: `x = clamp(floor(s·w) + o, 0,
//!   w−1)` computed in f32, where `o` is the integer texel offset (GL's rule: the offset moves
//!   the unnormalised texel coordinate before the wrap mode applies). RECT textures take
//!   unnormalised coordinates (`x = floor(s) + o`). Gathers shift their footprint by `o`.
//! * **Level of detail** travels as signed 8.8 fixed point, as on the hardware: explicit LODs and
//!   biases are converted with [`lod_to_fixed88`], implicit LODs come from coarse quad
//!   derivatives ([`Texture::implicit_lod`]), explicit derivatives the same way
//!   ([`Texture::gradient_lod`]: `log2` of the longer scaled derivative; no anisotropy). The
//!   level is `clamp((lod + 0x80) >> 8, 0, levels−1)`, i.e. nearest mip level; LOD queries
//!   return that level and the raw LOD ([`Texture::query_lod`]).
//! * **Array layers** are `clamp(round_half_even(layer), 0, layers−1)`.
//! * **Depth comparison** (shadow targets) tests `reference <= texel.x` and returns 1.0 or 0.0
//!   in all four components.
//! * **Cube maps** are addressed by face and (s, t) in [0, 1]; [`cube_project`] defines how a
//!   direction becomes a face and (s, t), and the compiler's cube sequence must compute exactly
//!   this.
//! * Fetches (`TXF`) outside the level return all zeros.

use serde::{Deserialize, Serialize};

/// Texture dimensionality (arrays are a flag on [`Texture`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dim {
    Buffer,
    #[serde(rename = "1d")]
    D1,
    #[serde(rename = "2d")]
    D2,
    #[serde(rename = "3d")]
    D3,
    Cube,
    /// 2D with unnormalised coordinates.
    Rect,
}

/// What a texel's components hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TexelKind {
    /// f32 values in [0, 1) (also used for UNORM/SNORM views).
    Float,
    /// Signed 32-bit integers.
    Sint,
    /// Unsigned 32-bit integers.
    Uint,
}

/// One virtual texture bound to a texture unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Texture {
    pub dim: Dim,
    #[serde(default)]
    pub array: bool,
    pub width: u32,
    #[serde(default = "one")]
    pub height: u32,
    #[serde(default = "one")]
    pub depth: u32,
    /// Array layers (6 faces per layer are implied for cube maps).
    #[serde(default = "one")]
    pub layers: u32,
    /// Mip levels; 0 means the full chain down to 1×1.
    #[serde(default)]
    pub levels: u32,
    #[serde(default = "float_kind")]
    pub kind: TexelKind,
    #[serde(default)]
    pub seed: u32,
    /// Samples per texel: 1, or 2–16 for multisample (2D, 2D array) textures, which have one
    /// level.
    #[serde(default = "one")]
    pub samples: u32,
}

fn one() -> u32 {
    1
}

fn float_kind() -> TexelKind {
    TexelKind::Float
}

/// Largest edge the model accepts (keeps level arithmetic in range).
pub const MAX_SIZE: u32 = 1 << 14;

/// Most samples per texel.
pub const MAX_SAMPLES: u32 = 16;

/// Samples of the default texture of a multisample target (`2D_MSAA`, `2D_ARRAY_MSAA`).
pub const DEFAULT_SAMPLES: u32 = 4;

impl Texture {
    /// The default texture for a unit: 16×16 (16×16×4 for 3D, 64 texels for buffers), full mip
    /// chain, 4 layers when arrayed, seeded with the unit number.
    pub fn default_for(dim: Dim, array: bool, kind: TexelKind, unit: u32) -> Texture {
        let (width, height, depth) = match dim {
            Dim::Buffer => (64, 1, 1),
            Dim::D1 => (16, 1, 1),
            Dim::D2 | Dim::Cube | Dim::Rect => (16, 16, 1),
            Dim::D3 => (16, 16, 4),
        };
        Texture {
            dim,
            array,
            width,
            height,
            depth,
            layers: if array { 4 } else { 1 },
            levels: 0,
            kind,
            seed: unit,
            samples: 1,
        }
    }

    /// This texture with `samples` samples per texel and one level (a multisample texture).
    pub fn multisampled(self, samples: u32) -> Texture {
        Texture { samples, levels: 1, ..self }
    }

    /// Checks sizes; returns a message naming the bad field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in
            [("width", self.width), ("height", self.height), ("depth", self.depth), ("layers", self.layers)]
        {
            if v == 0 || v > MAX_SIZE {
                return Err(format!("texture {name} must be in 1..={MAX_SIZE}, not {v}"));
            }
        }
        if self.samples == 0 || self.samples > MAX_SAMPLES {
            return Err(format!("texture samples must be in 1..={MAX_SAMPLES}, not {}", self.samples));
        }
        if self.samples > 1 && (self.dim != Dim::D2 || self.levels != 1) {
            return Err("a multisample texture (samples > 1) is 2D with exactly one level (\"levels\": 1)".into());
        }
        if self.levels > self.full_chain() {
            return Err(format!(
                "texture has {} levels but its size allows at most {}",
                self.levels,
                self.full_chain()
            ));
        }
        Ok(())
    }

    fn full_chain(&self) -> u32 {
        let largest = match self.dim {
            Dim::Buffer | Dim::Rect => return 1,
            Dim::D3 => self.width.max(self.height).max(self.depth),
            _ => self.width.max(self.height),
        };
        32 - largest.leading_zeros()
    }

    /// Number of mip levels.
    pub fn level_count(&self) -> u32 {
        if self.levels == 0 { self.full_chain() } else { self.levels }
    }

    /// Size of a level: (width, height, depth), each at least 1.
    pub fn level_size(&self, level: u32) -> (u32, u32, u32) {
        let shift = level.min(31);
        let depth = if self.dim == Dim::D3 { (self.depth >> shift).max(1) } else { 1 };
        ((self.width >> shift).max(1), (self.height >> shift).max(1), depth)
    }

    fn layer_count(&self) -> u32 {
        if self.dim == Dim::Cube { self.layers * 6 } else { self.layers }
    }

    /// The raw texel at integer coordinates, or zeros outside the level.
    /// `layer` is the array layer (for cube maps: `6·layer + face`). Multisample textures give
    /// sample 0.
    pub fn texel(&self, level: u32, layer: u32, x: i32, y: i32, z: i32) -> [u32; 4] {
        self.texel_sample(level, layer, x, y, z, 0)
    }

    /// Sample `sample` of a texel, or zeros outside the level or past the last sample. Samples of
    /// a multisample texture hash the sample index too (every sample has its own value);
    /// single-sample textures have sample 0 only.
    pub fn texel_sample(&self, level: u32, layer: u32, x: i32, y: i32, z: i32, sample: u32) -> [u32; 4] {
        let (w, h, d) = self.level_size(level);
        let inside = level < self.level_count()
            && sample < self.samples
            && layer < self.layer_count()
            && (0..w as i32).contains(&x)
            && (0..h as i32).contains(&y)
            && (0..d as i32).contains(&z);
        if !inside {
            return [0; 4];
        }
        std::array::from_fn(|c| {
            let words = [self.seed, level, layer, x as u32, y as u32, z as u32, c as u32, sample];
            let h = hash(if self.samples > 1 { &words } else { &words[..7] });
            match self.kind {
                TexelKind::Float => ((h >> 16) as f32 / 65536.0).to_bits(),
                TexelKind::Sint | TexelKind::Uint => h,
            }
        })
    }

    /// Nearest-filtered, clamp-to-edge sample at normalised coordinates (texel coordinates for
    /// RECT). `layer` is a float array coordinate; for cube maps pass the face in `face`.
    pub fn sample(&self, coords: SampleCoords, lod: i32) -> [u32; 4] {
        let level = self.select_level(lod);
        let (w, h, d) = self.level_size(level);
        let scale = |coord: f32, size: u32, offset: i32| -> i32 {
            let texel = if self.dim == Dim::Rect { coord.floor() } else { (coord * size as f32).floor() };
            clamp_index(texel + offset as f32, size)
        };
        let [ox, oy, oz] = coords.offset;
        let x = scale(coords.s, w, ox);
        let y = if matches!(self.dim, Dim::D1 | Dim::Buffer) { 0 } else { scale(coords.t, h, oy) };
        let z = if self.dim == Dim::D3 { scale(coords.r, d, oz) } else { 0 };
        let layer = if self.array { clamp_index(coords.layer.round_ties_even(), self.layers) as u32 } else { 0 };
        let layer = if self.dim == Dim::Cube { layer * 6 + coords.face.min(5) } else { layer };
        let texel = self.texel(level, layer, x, y, z);
        match coords.reference {
            Some(reference) => {
                let passed = reference <= f32::from_bits(texel[0]);
                [if passed { 1.0f32 } else { 0.0 }.to_bits(); 4]
            }
            None => texel,
        }
    }

    /// Gather: component `component` of the 2×2 footprint around the sample point, in the order
    /// (i0,j1), (i1,j1), (i1,j0), (i0,j0) as GL defines it; each texel clamped to the edge.
    pub fn gather(&self, coords: SampleCoords, component: usize) -> [u32; 4] {
        let (w, h, _) = self.level_size(0);
        let base = |coord: f32, size: u32, offset: i32| (coord * size as f32 - 0.5).floor() + offset as f32;
        let (i0, j0) = (base(coords.s, w, coords.offset[0]), base(coords.t, h, coords.offset[1]));
        let layer = if self.array { clamp_index(coords.layer.round_ties_even(), self.layers) as u32 } else { 0 };
        let layer = if self.dim == Dim::Cube { layer * 6 + coords.face.min(5) } else { layer };
        let at = |i: f32, j: f32| {
            let texel = self.texel(0, layer, clamp_index(i, w), clamp_index(j, h), 0);
            match coords.reference {
                Some(reference) => if reference <= f32::from_bits(texel[0]) { 1.0f32 } else { 0.0 }.to_bits(),
                None => texel[component & 3],
            }
        };
        [at(i0, j0 + 1.0), at(i0 + 1.0, j0 + 1.0), at(i0 + 1.0, j0), at(i0, j0)]
    }

    /// The mip level selected by an 8.8 fixed-point LOD: nearest level, clamped to the chain.
    pub fn select_level(&self, lod: i32) -> u32 {
        let level = (lod.saturating_add(0x80)) >> 8;
        level.clamp(0, self.level_count() as i32 - 1) as u32
    }

    /// Implicit LOD (8.8 fixed point) of a quad from coarse derivatives of its coordinates.
    /// `quad[i]` are the (s, t, r) coordinates of lane i; lane bit 0 is x, bit 1 is y.
    pub fn implicit_lod(&self, quad: &[[f32; 3]; 4]) -> i32 {
        let scales = self.derivative_scales();
        let rho = |a: usize, b: usize| -> f32 {
            let mut sum = 0.0f32;
            for (c, &scale) in scales.iter().enumerate() {
                let delta = (quad[b][c] - quad[a][c]) * scale;
                sum += delta * delta;
            }
            sum.sqrt()
        };
        let rho = rho(0, 1).max(rho(0, 2));
        lod_to_fixed88(rho.log2())
    }

    /// Bounds of [`Texture::implicit_lod`] over every quad whose lane coordinates (s, t, r) lie
    /// in `boxes` (intervals): interval arithmetic on the same differences, through the same
    /// monotone map, widened by a relative 2^-16 for the f32 roundings of `implicit_lod`.
    pub fn implicit_lod_bounds(&self, boxes: &[[(f64, f64); 3]; 4]) -> (i32, i32) {
        let scales = self.derivative_scales();
        // (smallest, largest) length of the difference between lanes a and b.
        let rho = |a: usize, b: usize| -> (f64, f64) {
            let (mut small, mut large) = (0.0f64, 0.0f64);
            for (c, &scale) in scales.iter().enumerate() {
                let lo = (boxes[b][c].0 - boxes[a][c].1) * f64::from(scale);
                let hi = (boxes[b][c].1 - boxes[a][c].0) * f64::from(scale);
                let nearest = if lo <= 0.0 && hi >= 0.0 { 0.0 } else { lo.abs().min(hi.abs()) };
                small += nearest * nearest;
                large += lo.abs().max(hi.abs()).powi(2);
            }
            (small.sqrt(), large.sqrt())
        };
        let (x, y) = (rho(0, 1), rho(0, 2));
        let slack = 1.0 / 65536.0;
        let low = (x.0.max(y.0) * (1.0 - slack)) as f32;
        let high = (x.1.max(y.1) * (1.0 + slack)) as f32;
        (lod_to_fixed88(low.log2()), lod_to_fixed88(high.log2()))
    }

    /// Per coordinate the LOD uses, the factor from coordinate to texels of level 0 (1 for
    /// RECT, whose coordinates are in texels).
    fn derivative_scales(&self) -> Vec<f32> {
        let (w, h, d) = self.level_size(0);
        let used = match self.dim {
            Dim::Buffer | Dim::D1 => 1,
            Dim::D3 => 3,
            _ => 2,
        };
        let size = [w as f32, h as f32, d as f32];
        size[..used].iter().map(|&s| if self.dim == Dim::Rect { 1.0 } else { s }).collect()
    }
}

impl Texture {
    /// LOD (8.8 fixed point) from explicit derivatives (`TXD`): `ddx`/`ddy` are the (s, t, r)
    /// derivatives, combined exactly like [`Texture::implicit_lod`] combines the quad's
    /// differences.
    pub fn gradient_lod(&self, ddx: [f32; 3], ddy: [f32; 3]) -> i32 {
        let quad = [[0.0; 3], ddx, ddy, [0.0; 3]];
        self.implicit_lod(&quad)
    }

    /// `LODQ`/`LOD`: (the level a lookup accesses, the unclamped LOD) as floats, from the
    /// implicit 8.8 LOD `l` of the quad: `(select_level(l), l / 256)`. With nearest-level
    /// selection the accessed level is the clamped LOD rounded to the nearest level, ties up
    /// (tgsi.rst: "the LOD that will be accessed, based on min/max LODs and mipmap filters").
    pub fn query_lod(&self, quad: &[[f32; 3]; 4]) -> (f32, f32) {
        let lod = self.implicit_lod(quad);
        (self.select_level(lod) as f32, lod as f32 / 256.0)
    }

    /// `TXQ`: (width, height, depth or layers) of `level`, and the number of levels.
    /// Cube maps report their face size; arrays report layers in the coordinate after the
    /// last dimension.
    pub fn query_size(&self, level: u32) -> [u32; 4] {
        let (w, h, d) = self.level_size(level);
        let levels = self.level_count();
        match (self.dim, self.array) {
            (Dim::Buffer, _) => [self.width, 0, 0, 1],
            (Dim::D1, false) => [w, 0, 0, levels],
            (Dim::D1, true) => [w, self.layers, 0, levels],
            (Dim::D2 | Dim::Rect | Dim::Cube, false) => [w, h, 0, levels],
            (Dim::D2 | Dim::Rect | Dim::Cube, true) => [w, h, self.layers, levels],
            (Dim::D3, _) => [w, h, d, levels],
        }
    }
}

/// Coordinates of one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleCoords {
    pub s: f32,
    pub t: f32,
    pub r: f32,
    pub layer: f32,
    /// Cube face 0–5 (+X, −X, +Y, −Y, +Z, −Z).
    pub face: u32,
    /// Depth reference for shadow lookups.
    pub reference: Option<f32>,
    /// Integer texel offsets (x, y, z), added to the texel coordinate before clamping.
    pub offset: [i32; 3],
}

fn clamp_index(texel: f32, size: u32) -> i32 {
    if texel.is_nan() { 0 } else { texel.clamp(0.0, (size - 1) as f32) as i32 }
}

/// Converts a float LOD (or bias) to signed 8.8 fixed point the way the compiler does:
/// `F32_TO_S32.rtz(clamp(lod/16, −1, 1) · 4096)`, i.e. saturating at ±16 levels.
/// NaN becomes −4096, as the `clamp_m1_1` modifier sends NaN to −1.
pub fn lod_to_fixed88(lod: f32) -> i32 {
    let scaled = (lod * 0.0625).clamp(-1.0, 1.0);
    if scaled.is_nan() { -4096 } else { (scaled * 4096.0) as i32 }
}

/// Cube-map face selection and projection, in the exact order of operations of the compiler's
/// cube sequence: major axis `ma = max(|x|, |y|, |z|)`, face by the first axis (x, then y, then
/// z) whose magnitude equals `ma`, then `s = clamp(sc · (0.5 / ma) + 0.5, 0, 1)` and likewise
/// `t`, with `0.5 / ma` computed as `rcp(ma) · 0.5` and each step rounded to f32.
pub fn cube_project(x: f32, y: f32, z: f32) -> (u32, f32, f32) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let ma = ax.max(ay).max(az);
    let (face, sc, tc) = if ax == ma {
        if x >= 0.0 { (0, -z, -y) } else { (1, z, -y) }
    } else if ay == ma {
        if y >= 0.0 { (2, x, z) } else { (3, x, -z) }
    } else if z >= 0.0 {
        (4, x, -y)
    } else {
        (5, -x, -y)
    };
    let half_rcp = (1.0 / ma) * 0.5;
    // A zero direction gives NaN here; like the hardware's clamp modifier (which the compiled
    // projection uses), NaN goes to the lower bound.
    let project = |c: f32| {
        let v = c.mul_add(half_rcp, 0.5);
        if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
    };
    (face, project(sc), project(tc))
}

/// A 32-bit avalanche hash of a few words (fixed forever: golden outputs depend on it).
fn hash(words: &[u32]) -> u32 {
    super::hash_words(0x9E37_79B9, words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every quad inside the boxes has its implicit LOD inside the bounds, and the bounds of
    /// exact points are that quad's LOD.
    #[test]
    fn implicit_lod_bounds_contain_every_quad_in_the_boxes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for dim in [Dim::D1, Dim::D2, Dim::D3, Dim::Rect] {
            let tex = Texture::default_for(dim, false, TexelKind::Float, 0);
            for case in 0..2000 {
                // Coordinates near each other (derivatives around one texel) with errors from
                // none to larger than the differences.
                let spread = [0.0, 1e-4, 0.02, 0.3][case % 4];
                let error = [0.0, 1e-7, 1e-3, 0.05][(case / 4) % 4];
                let centre: Vec<f64> = (0..3).map(|_| next()).collect();
                let boxes: [[(f64, f64); 3]; 4] = std::array::from_fn(|_| {
                    std::array::from_fn(|c| {
                        // An f32 value with an error bound, as the interpreter holds them.
                        let x = (centre[c] + spread * (next() - 0.5)) as f32 as f64;
                        let e = error * next();
                        (x - e, x + e)
                    })
                });
                let (low, high) = tex.implicit_lod_bounds(&boxes);
                assert!(low <= high);
                for _ in 0..8 {
                    let quad: [[f32; 3]; 4] = std::array::from_fn(|l| {
                        std::array::from_fn(|c| {
                            // An f32 inside the box (its centre is one).
                            let (lo, hi) = boxes[l][c];
                            let x = (lo + (hi - lo) * next()) as f32;
                            if (lo..=hi).contains(&(x as f64)) { x } else { ((lo + hi) / 2.0) as f32 }
                        })
                    });
                    let lod = tex.implicit_lod(&quad);
                    assert!(low <= lod && lod <= high, "{dim:?} case {case}: {low} <= {lod} <= {high}");
                }
            }
        }
    }

    fn tex2d() -> Texture {
        Texture::default_for(Dim::D2, false, TexelKind::Float, 0)
    }

    #[test]
    fn hash_is_stable() {
        // Golden values: changing the hash would silently change every test expectation.
        assert_eq!(hash(&[]), 0x9E37_79B9);
        assert_eq!(hash(&[0, 0, 0, 0, 0, 0, 0]), hash(&[0, 0, 0, 0, 0, 0, 0]));
        assert_ne!(hash(&[1]), hash(&[2]));
    }

    #[test]
    fn float_texels_are_fractions() {
        let t = tex2d();
        for c in 0..4 {
            let v = f32::from_bits(t.texel(0, 0, 3, 4, 0)[c]);
            assert!((0.0..1.0).contains(&v));
            assert_eq!(v * 65536.0, (v * 65536.0).floor());
        }
        assert_eq!(t.texel(0, 0, 16, 0, 0), [0; 4], "outside the level");
        assert_eq!(t.texel(5, 0, 0, 0, 0), [0; 4], "16x16 has 5 levels");
    }

    #[test]
    fn mip_chain() {
        let t = tex2d();
        assert_eq!(t.level_count(), 5);
        assert_eq!(t.level_size(4), (1, 1, 1));
        assert_eq!(t.select_level(lod_to_fixed88(0.49)), 0);
        assert_eq!(t.select_level(lod_to_fixed88(0.5)), 1);
        assert_eq!(t.select_level(lod_to_fixed88(100.0)), 4);
        assert_eq!(t.select_level(lod_to_fixed88(-3.0)), 0);
    }

    #[test]
    fn nearest_sampling_and_clamp() {
        let t = tex2d();
        let at = |s, t_| SampleCoords { s, t: t_, ..SampleCoords::default() };
        assert_eq!(t.sample(at(0.0, 0.0), 0), t.texel(0, 0, 0, 0, 0));
        assert_eq!(t.sample(at(0.999, 0.5), 0), t.texel(0, 0, 15, 8, 0));
        assert_eq!(t.sample(at(7.0, -3.0), 0), t.texel(0, 0, 15, 0, 0));
        assert_eq!(t.sample(at(f32::NAN, 0.0), 0), t.texel(0, 0, 0, 0, 0));
    }

    #[test]
    fn offsets_move_before_the_clamp() {
        let t = tex2d();
        let at = |s, t_, o| SampleCoords { s, t: t_, offset: o, ..SampleCoords::default() };
        assert_eq!(t.sample(at(0.5, 0.5, [1, -2, 0]), 0), t.texel(0, 0, 9, 6, 0));
        // Outside the texture, the offset applies first: 17 - 1 = 16 clamps to 15 (not 14).
        assert_eq!(t.sample(at(17.0 / 16.0, 0.0, [-1, 0, 0]), 0), t.texel(0, 0, 15, 0, 0));
        let g = t.gather(at(0.5, 0.5, [1, 1, 0]), 0);
        assert_eq!(g[3], t.texel(0, 0, 8, 8, 0)[0]);
    }

    #[test]
    fn shadow_compare() {
        let t = tex2d();
        let texel = f32::from_bits(t.texel(0, 0, 0, 0, 0)[0]);
        let coords = |reference| SampleCoords { reference: Some(reference), ..SampleCoords::default() };
        assert_eq!(t.sample(coords(texel), 0), [1.0f32.to_bits(); 4]);
        assert_eq!(t.sample(coords(texel + 0.5), 0), [0; 4]);
    }

    #[test]
    fn implicit_lod_from_quad() {
        let t = tex2d();
        // One texel per pixel in x, two in y: rho = 2/16·16 → log2(2) = 1.0 → 0x100.
        let quad = [[0.0, 0.0, 0.0], [1.0 / 16.0, 0.0, 0.0], [0.0, 2.0 / 16.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(t.implicit_lod(&quad), 0x100);
        assert_eq!(t.implicit_lod(&[[0.5, 0.5, 0.0]; 4]), -4096, "no variation saturates low");
    }

    #[test]
    fn cube_faces() {
        assert_eq!(cube_project(1.0, 0.0, 0.0), (0, 0.5, 0.5));
        assert_eq!(cube_project(-1.0, 0.0, 0.0).0, 1);
        assert_eq!(cube_project(0.0, 2.0, 0.0).0, 2);
        assert_eq!(cube_project(0.0, 0.0, -1.0), (5, 0.5, 0.5));
        assert_eq!(cube_project(1.0, 1.0, 0.0).0, 0, "ties go to x");
        assert_eq!(cube_project(0.0, 0.0, 1.0).1, 0.5);
        assert_eq!(cube_project(1.0, 0.0, 1.0).1, 0.0, "-z/|x| = -1 → s = 0");
    }

    #[test]
    fn gradients_and_queries() {
        let t = tex2d();
        assert_eq!(t.gradient_lod([1.0 / 16.0, 0.0, 0.0], [0.0, 4.0 / 16.0, 0.0]), 0x200);
        let quad = [[0.0, 0.0, 0.0], [0.25, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(t.query_lod(&quad), (2.0, 2.0));
        let far = [[0.0, 0.0, 0.0], [64.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
        assert_eq!(t.query_lod(&far), (4.0, 10.0));
        assert_eq!(t.query_size(1), [8, 8, 0, 5]);
        let arr = Texture::default_for(Dim::D2, true, TexelKind::Float, 1);
        assert_eq!(arr.query_size(0), [16, 16, 4, 5]);
    }

    #[test]
    fn gather_footprint() {
        let t = tex2d();
        let coords = SampleCoords { s: 0.5, t: 0.5, ..SampleCoords::default() };
        let g = t.gather(coords, 1);
        assert_eq!(g[3], t.texel(0, 0, 7, 7, 0)[1]);
        assert_eq!(g[1], t.texel(0, 0, 8, 8, 0)[1]);
    }

    #[test]
    fn json_form() {
        let t: Texture =
            serde_json::from_str(r#"{"dim": "3d", "width": 8, "height": 4, "depth": 2, "seed": 9}"#).unwrap();
        assert_eq!(t.level_count(), 4);
        assert!(t.validate().is_ok());
        let bad: Texture = serde_json::from_str(r#"{"dim": "2d", "width": 0}"#).unwrap();
        assert!(bad.validate().unwrap_err().contains("width"));
    }
}
