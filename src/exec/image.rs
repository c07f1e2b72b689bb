//! The image model shared by the TGSI interpreter and the Valhall emulator: what `IMAGE[i]`
//! holds, how texels are packed, and which accesses are out of bounds. This file alone defines
//! it (docs/exec-formats.md restates it); both executors call these functions, so a format's
//! conversion rules exist exactly once.
//!
//! * **An image** ([`Image`]) has a shape (dimensionality, array, samples), a size, a format and
//!   a seed. Its contents are bytes, texel after texel, in the order (layer, z, y, x, sample)
//!   from the slowest to the fastest:
//!   `linear = (((layer·depth + z)·height + y)·width + x)·samples + sample`, at byte
//!   `linear · texel_bytes`. A cube map has six layers (faces) per cube, a
//!   cube-map array `6·layers`. Sizes follow the texture model (`exec::texture`): the default
//!   image of a target has the default texture's size, one mip level.
//! * **Initial contents** are a hash of (seed, texel, channel), per channel: float channels hold
//!   multiples of 1/256 in [−1, 1) (multiples of 1/32 in [0, 1) for the unsigned
//!   R11G11B10 floats: exact in every float format), normalised and
//!   integer channels raw random bits, each packed by the format's own rule.
//! * **Formats** ([`Format`]) are the 39 OpenGL allows for images. A texel is a little-endian
//!   integer of 8–128 bits; channel c occupies a fixed bit range of it. [`Format::pack`] turns
//!   four 32-bit register values into a texel, [`Format::unpack`] the reverse:
//!   - 32-bit float channels keep the bits (NaN payloads too);
//!   - binary16 channels round to nearest even (NaN stays NaN, overflow becomes infinity);
//!   - the unsigned 11- and 10-bit floats of R11G11B10_FLOAT round to nearest even; negative
//!     values (and −0) become 0, finite values above the largest finite one become it, +∞
//!     stays +∞, NaN becomes the quiet NaN with only the top mantissa bit set (EXT_packed_float);
//!   - UNORM: `round_even(clamp(x, 0, 1) · (2ⁿ−1))`, SNORM: `round_even(clamp(x, −1, 1) ·
//!     (2ⁿ⁻¹−1))`, NaN → 0; unpacked as `c / (2ⁿ−1)` and `max(c / (2ⁿ⁻¹−1), −1)`, each one
//!     correctly rounded f32 division;
//!   - SINT/UINT channels narrower than 32 bits saturate to their range; unpacking sign- or
//!     zero-extends.
//! * **Registers** hold f32 for float, UNORM and SNORM formats, s32 for SINT and u32 for UINT
//!   ([`Class`]). Unpacking fills missing channels with (0, 0, 0, 1): 1.0 for the float class,
//!   the integer 1 otherwise.
//! * **Coordinates.** TGSI addresses are per target ([`TexelCoord::from_tgsi`], tgsi_to_nir's
//!   convention: array layer in `.y` for 1D arrays and `.z` otherwise, cube face or `6·cube +
//!   face` in `.z`, MSAA sample in `.w`). The hardware takes two packed words
//!   ([`TexelCoord::from_packed`], §C.13 of the lowering reference): x and y are 16-bit, so is
//!   the array layer (bits 16–31 of the second word) and, in MSAA arrays, the sample (bits
//!   0–15); 1D/buffer x, the 3D depth and the single-layer MSAA sample use the whole word.
//! * **Out of bounds** (any coordinate at or past its size, a sample at or past the count):
//!   loads return zero in every channel, stores and atomics do nothing and atomics return 0 —
//!   OpenGL's rule for invalid image accesses with robust access (robustImageAccess), which the
//!   model adopts for every access. (GL leaves the alpha of an invalid load undefined; the model
//!   returns 0.)

use super::texture::{Dim, Texture};
use crate::tgsi::ast::TextureTarget;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The number class of a format: what its channels are in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Float, UNORM and SNORM: f32 in registers.
    Float,
    /// Signed integers: s32.
    Sint,
    /// Unsigned integers: u32.
    Uint,
}

/// How one channel is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// binary32.
    F32,
    /// binary16.
    F16,
    /// Unsigned float with 5 exponent bits and this many mantissa bits (6 or 5).
    UFloat(u32),
    Unorm(u32),
    Snorm(u32),
    Sint(u32),
    Uint(u32),
}

impl Channel {
    pub fn bits(self) -> u32 {
        match self {
            Channel::F32 => 32,
            Channel::F16 => 16,
            Channel::UFloat(m) => 5 + m,
            Channel::Unorm(b) | Channel::Snorm(b) | Channel::Sint(b) | Channel::Uint(b) => b,
        }
    }

    fn mask(self) -> u32 {
        if self.bits() >= 32 { u32::MAX } else { (1 << self.bits()) - 1 }
    }

    /// The channel's bits for a register value.
    pub fn pack(self, reg: u32) -> u32 {
        let x = f32::from_bits(reg);
        match self {
            Channel::F32 => reg,
            Channel::F16 => u32::from(half::f16::from_f32(x).to_bits()),
            Channel::UFloat(m) => pack_ufloat(x, m),
            Channel::Unorm(b) => {
                let max = f64::from((1u32 << b) - 1);
                if x.is_nan() { 0 } else { (f64::from(x.clamp(0.0, 1.0)) * max).round_ties_even() as u32 }
            }
            Channel::Snorm(b) => {
                let max = f64::from((1u32 << (b - 1)) - 1);
                let v = if x.is_nan() { 0 } else { (f64::from(x.clamp(-1.0, 1.0)) * max).round_ties_even() as i32 };
                v as u32 & self.mask()
            }
            Channel::Sint(32) | Channel::Uint(32) => reg,
            Channel::Sint(b) => {
                let (lo, hi) = (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1);
                (i64::from(reg as i32).clamp(lo, hi) as u32) & self.mask()
            }
            Channel::Uint(_) => reg.min(self.mask()),
        }
    }

    /// The register value of the channel's bits.
    pub fn unpack(self, bits: u32) -> u32 {
        let bits = bits & self.mask();
        match self {
            Channel::F32 => bits,
            Channel::F16 => half::f16::from_bits(bits as u16).to_f32().to_bits(),
            Channel::UFloat(m) => unpack_ufloat(bits, m).to_bits(),
            Channel::Unorm(b) => (bits as f32 / ((1u32 << b) - 1) as f32).to_bits(),
            Channel::Snorm(b) => {
                let v = sign_extend(bits, b);
                (v as f32 / ((1u32 << (b - 1)) - 1) as f32).max(-1.0).to_bits()
            }
            Channel::Sint(b) => sign_extend(bits, b) as u32,
            Channel::Uint(_) => bits,
        }
    }
}

fn sign_extend(bits: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((bits << shift) as i32) >> shift
}

/// Unsigned float with 5 exponent bits (bias 15) and `m` mantissa bits.
fn pack_ufloat(x: f32, m: u32) -> u32 {
    let exp_all = 0x1F << m;
    if x.is_nan() {
        return exp_all | 1 << (m - 1);
    }
    if x <= 0.0 {
        return 0;
    }
    if x.is_infinite() {
        return exp_all;
    }
    let max_finite = (0x1E << m) | ((1 << m) - 1);
    let max_value = f64::from(unpack_ufloat(max_finite, m));
    let v = f64::from(x);
    if v >= max_value {
        return max_finite;
    }
    // The quantum at x's binade (never below the denormal quantum 2^(−14−m)); the scaled value
    // is exact in f64, so one rounding happens.
    let exponent = ((x.to_bits() >> 23) & 0xFF) as i32 - 127;
    let quantum_exp = exponent.max(-14) - m as i32;
    let n = (v * 2f64.powi(-quantum_exp)).round_ties_even();
    let rounded = n * 2f64.powi(quantum_exp);
    if rounded == 0.0 {
        return 0;
    }
    if rounded < 2f64.powi(-14) {
        // Denormal: the mantissa counts quanta of 2^(−14−m).
        return (rounded * 2f64.powi(14 + m as i32)) as u32;
    }
    let e = rounded.log2().floor() as i32;
    // log2 of an exact power-of-two multiple is exact enough here; correct any off-by-one.
    let e = if 2f64.powi(e) > rounded {
        e - 1
    } else if 2f64.powi(e + 1) <= rounded {
        e + 1
    } else {
        e
    };
    let mantissa = (rounded / 2f64.powi(e - m as i32)) as u32 - (1 << m);
    ((e + 15) as u32) << m | mantissa
}

fn unpack_ufloat(bits: u32, m: u32) -> f32 {
    let exp = (bits >> m) & 0x1F;
    let man = bits & ((1 << m) - 1);
    match exp {
        0 => (f64::from(man) * 2f64.powi(-14 - m as i32)) as f32,
        0x1F if man == 0 => f32::INFINITY,
        0x1F => f32::NAN,
        e => (f64::from((1 << m) | man) * 2f64.powi(e as i32 - 15 - m as i32)) as f32,
    }
}

/// One image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatInfo {
    /// The `PIPE_FORMAT_` name without the prefix.
    pub name: &'static str,
    pub class: Class,
    pub channels: &'static [Channel],
}

use Channel as C;

/// The formats OpenGL allows for image units (ARB_shader_image_load_store, GL 4.2 table 8.27).
pub static FORMATS: [FormatInfo; 39] = {
    const fn f(name: &'static str, class: Class, channels: &'static [Channel]) -> FormatInfo {
        FormatInfo { name, class, channels }
    }
    use Class::{Float, Sint, Uint};
    [
        f("R32G32B32A32_FLOAT", Float, &[C::F32, C::F32, C::F32, C::F32]),
        f("R16G16B16A16_FLOAT", Float, &[C::F16, C::F16, C::F16, C::F16]),
        f("R32G32_FLOAT", Float, &[C::F32, C::F32]),
        f("R16G16_FLOAT", Float, &[C::F16, C::F16]),
        f("R11G11B10_FLOAT", Float, &[C::UFloat(6), C::UFloat(6), C::UFloat(5)]),
        f("R32_FLOAT", Float, &[C::F32]),
        f("R16_FLOAT", Float, &[C::F16]),
        f("R16G16B16A16_UNORM", Float, &[C::Unorm(16), C::Unorm(16), C::Unorm(16), C::Unorm(16)]),
        f("R10G10B10A2_UNORM", Float, &[C::Unorm(10), C::Unorm(10), C::Unorm(10), C::Unorm(2)]),
        f("R8G8B8A8_UNORM", Float, &[C::Unorm(8), C::Unorm(8), C::Unorm(8), C::Unorm(8)]),
        f("R16G16_UNORM", Float, &[C::Unorm(16), C::Unorm(16)]),
        f("R8G8_UNORM", Float, &[C::Unorm(8), C::Unorm(8)]),
        f("R16_UNORM", Float, &[C::Unorm(16)]),
        f("R8_UNORM", Float, &[C::Unorm(8)]),
        f("R16G16B16A16_SNORM", Float, &[C::Snorm(16), C::Snorm(16), C::Snorm(16), C::Snorm(16)]),
        f("R8G8B8A8_SNORM", Float, &[C::Snorm(8), C::Snorm(8), C::Snorm(8), C::Snorm(8)]),
        f("R16G16_SNORM", Float, &[C::Snorm(16), C::Snorm(16)]),
        f("R8G8_SNORM", Float, &[C::Snorm(8), C::Snorm(8)]),
        f("R16_SNORM", Float, &[C::Snorm(16)]),
        f("R8_SNORM", Float, &[C::Snorm(8)]),
        f("R32G32B32A32_SINT", Sint, &[C::Sint(32), C::Sint(32), C::Sint(32), C::Sint(32)]),
        f("R16G16B16A16_SINT", Sint, &[C::Sint(16), C::Sint(16), C::Sint(16), C::Sint(16)]),
        f("R8G8B8A8_SINT", Sint, &[C::Sint(8), C::Sint(8), C::Sint(8), C::Sint(8)]),
        f("R32G32_SINT", Sint, &[C::Sint(32), C::Sint(32)]),
        f("R16G16_SINT", Sint, &[C::Sint(16), C::Sint(16)]),
        f("R8G8_SINT", Sint, &[C::Sint(8), C::Sint(8)]),
        f("R32_SINT", Sint, &[C::Sint(32)]),
        f("R16_SINT", Sint, &[C::Sint(16)]),
        f("R8_SINT", Sint, &[C::Sint(8)]),
        f("R32G32B32A32_UINT", Uint, &[C::Uint(32), C::Uint(32), C::Uint(32), C::Uint(32)]),
        f("R16G16B16A16_UINT", Uint, &[C::Uint(16), C::Uint(16), C::Uint(16), C::Uint(16)]),
        f("R10G10B10A2_UINT", Uint, &[C::Uint(10), C::Uint(10), C::Uint(10), C::Uint(2)]),
        f("R8G8B8A8_UINT", Uint, &[C::Uint(8), C::Uint(8), C::Uint(8), C::Uint(8)]),
        f("R32G32_UINT", Uint, &[C::Uint(32), C::Uint(32)]),
        f("R16G16_UINT", Uint, &[C::Uint(16), C::Uint(16)]),
        f("R8G8_UINT", Uint, &[C::Uint(8), C::Uint(8)]),
        f("R32_UINT", Uint, &[C::Uint(32)]),
        f("R16_UINT", Uint, &[C::Uint(16)]),
        f("R8_UINT", Uint, &[C::Uint(8)]),
    ]
};

/// An image format: an index into [`FORMATS`]. Serialised as its name (`"R8G8B8A8_UNORM"`,
/// optionally with the `PIPE_FORMAT_` prefix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Format(u8);

impl Format {
    /// Looks a format up by name, with or without `PIPE_FORMAT_`, ignoring case.
    pub fn by_name(name: &str) -> Option<Format> {
        let bare = name.strip_prefix("PIPE_FORMAT_").unwrap_or(name);
        FORMATS.iter().position(|f| f.name.eq_ignore_ascii_case(bare)).map(|i| Format(i as u8))
    }

    pub fn all() -> impl Iterator<Item = Format> {
        (0..FORMATS.len() as u8).map(Format)
    }

    pub fn info(self) -> &'static FormatInfo {
        &FORMATS[usize::from(self.0)]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn class(self) -> Class {
        self.info().class
    }

    /// A small number identifying the format (the emulator's conversion descriptors carry it).
    pub fn id(self) -> u8 {
        self.0
    }

    pub fn from_id(id: u8) -> Option<Format> {
        (usize::from(id) < FORMATS.len()).then_some(Format(id))
    }

    pub fn texel_bits(self) -> u32 {
        self.info().channels.iter().map(|c| c.bits()).sum()
    }

    pub fn texel_bytes(self) -> usize {
        (self.texel_bits() / 8) as usize
    }

    /// Bit offset and width of each channel in the texel.
    pub fn layout(self) -> impl Iterator<Item = (Channel, u32)> {
        self.info().channels.iter().scan(0u32, |at, &c| {
            let offset = *at;
            *at += c.bits();
            Some((c, offset))
        })
    }

    /// Packs four register values into a texel (channels beyond the format are ignored).
    pub fn pack(self, regs: [u32; 4]) -> Vec<u8> {
        let mut texel = 0u128;
        for (i, (c, offset)) in self.layout().enumerate() {
            texel |= u128::from(c.pack(regs[i])) << offset;
        }
        texel.to_le_bytes()[..self.texel_bytes()].to_vec()
    }

    /// Unpacks a texel into four register values, missing channels (0, 0, 0, 1).
    pub fn unpack(self, bytes: &[u8]) -> [u32; 4] {
        let mut raw = [0u8; 16];
        let n = self.texel_bytes().min(bytes.len());
        raw[..n].copy_from_slice(&bytes[..n]);
        let texel = u128::from_le_bytes(raw);
        let one = if self.class() == Class::Float { 1.0f32.to_bits() } else { 1 };
        let mut out = [0, 0, 0, one];
        for (i, (c, offset)) in self.layout().enumerate() {
            out[i] = c.unpack((texel >> offset) as u32);
        }
        out
    }

    /// Replaces the channels of `texel` selected by `mask` (bit c = channel c) with those of
    /// `regs`, leaving the other channels' bits untouched.
    pub fn merge(self, texel: &[u8], regs: [u32; 4], mask: u8) -> Vec<u8> {
        let mut raw = [0u8; 16];
        raw[..self.texel_bytes()].copy_from_slice(&texel[..self.texel_bytes()]);
        let mut value = u128::from_le_bytes(raw);
        for (i, (c, offset)) in self.layout().enumerate() {
            if mask >> i & 1 == 1 {
                let m = u128::from(c.mask()) << offset;
                value = (value & !m) | (u128::from(c.pack(regs[i])) << offset);
            }
        }
        value.to_le_bytes()[..self.texel_bytes()].to_vec()
    }
}

impl TryFrom<String> for Format {
    type Error = String;
    fn try_from(name: String) -> Result<Format, String> {
        Format::by_name(&name).ok_or_else(|| format!("`{name}` is not an image format OpenGL allows"))
    }
}

impl From<Format> for String {
    fn from(f: Format) -> String {
        f.name().to_string()
    }
}

/// The shape of an image: what its coordinates mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub dim: Dim,
    pub array: bool,
    pub msaa: bool,
}

impl Shape {
    /// The shape of an image target (`None` for shadow and unknown targets).
    pub fn of_target(target: TextureTarget) -> Option<Shape> {
        use TextureTarget as T;
        let (dim, array, msaa) = match target.canonical() {
            T::Buffer => (Dim::Buffer, false, false),
            T::Tex1D => (Dim::D1, false, false),
            T::Tex2D => (Dim::D2, false, false),
            T::Tex3D => (Dim::D3, false, false),
            T::Cube => (Dim::Cube, false, false),
            T::Rect => (Dim::Rect, false, false),
            T::Array1D => (Dim::D1, true, false),
            T::Array2D => (Dim::D2, true, false),
            T::CubeArray => (Dim::Cube, true, false),
            T::Msaa2D => (Dim::D2, false, true),
            T::ArrayMsaa2D => (Dim::D2, true, true),
            _ => return None,
        };
        Some(Shape { dim, array, msaa })
    }
}

/// Integer texel coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TexelCoord {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    /// Array layer; for cube maps `6·cube + face`.
    pub layer: u32,
    pub sample: u32,
}

impl TexelCoord {
    /// The texel a TGSI address names for an image of this shape.
    pub fn from_tgsi(shape: Shape, a: [u32; 4]) -> TexelCoord {
        let mut c = TexelCoord { x: a[0], ..TexelCoord::default() };
        match (shape.dim, shape.array) {
            (Dim::Buffer, _) | (Dim::D1, false) => {}
            (Dim::D1, true) => c.layer = a[1],
            (Dim::D3, _) => (c.y, c.z) = (a[1], a[2]),
            (Dim::Cube, _) | (_, true) => (c.y, c.layer) = (a[1], a[2]),
            _ => c.y = a[1],
        }
        if shape.msaa {
            c.sample = a[3];
        }
        c
    }

    /// The texel the two packed coordinate words of `LD_TEX`/`LEA_TEX` name (§C.13).
    pub fn from_packed(shape: Shape, w0: u32, w1: u32) -> TexelCoord {
        let mut c = TexelCoord::default();
        match shape.dim {
            Dim::Buffer | Dim::D1 => c.x = w0,
            _ => (c.x, c.y) = (w0 & 0xFFFF, w0 >> 16),
        }
        match (shape.dim, shape.array, shape.msaa) {
            (Dim::D3, ..) => c.z = w1,
            (_, false, true) => c.sample = w1,
            (_, true, true) => (c.sample, c.layer) = (w1 & 0xFFFF, w1 >> 16),
            (Dim::Cube, ..) | (_, true, false) => c.layer = w1 >> 16,
            _ => {}
        }
        c
    }

    /// The two packed words the compiler builds for this texel (§C.13): the fields the packing
    /// narrows to 16 bits keep their low 16 bits.
    pub fn to_packed(self, shape: Shape) -> (u32, u32) {
        let w0 = match shape.dim {
            Dim::Buffer | Dim::D1 => self.x,
            _ => (self.x & 0xFFFF) | self.y << 16,
        };
        let w1 = match (shape.dim, shape.array, shape.msaa) {
            (Dim::D3, ..) => self.z,
            (_, false, true) => self.sample,
            (_, true, true) => (self.sample & 0xFFFF) | self.layer << 16,
            (Dim::Cube, ..) | (_, true, false) => self.layer << 16,
            _ => 0,
        };
        (w0, w1)
    }
}

/// One image bound to an image unit (`IMAGE[i]`, table 5 entry i).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Image {
    pub dim: Dim,
    #[serde(default)]
    pub array: bool,
    pub format: Format,
    pub width: u32,
    #[serde(default = "one")]
    pub height: u32,
    #[serde(default = "one")]
    pub depth: u32,
    /// Array layers (cube maps: cubes, six faces each).
    #[serde(default = "one")]
    pub layers: u32,
    /// Samples per texel (more than one: a multisampled image).
    #[serde(default = "one")]
    pub samples: u32,
    #[serde(default)]
    pub seed: u32,
}

fn one() -> u32 {
    1
}

/// The largest image data the model accepts, in bytes.
pub const MAX_BYTES: u64 = 64 << 20;

/// Samples of a default multisampled image.
pub const DEFAULT_SAMPLES: u32 = 4;

impl Image {
    /// The default image of a target: the size of the default texture of that target
    /// (`Texture::default_for`), 4 samples when multisampled.
    pub fn default_for(target: TextureTarget, format: Format, seed: u32) -> Option<Image> {
        let shape = Shape::of_target(target)?;
        let t = Texture::default_for(shape.dim, shape.array, super::texture::TexelKind::Float, 0);
        Some(Image {
            dim: shape.dim,
            array: shape.array,
            format,
            width: t.width,
            height: t.height,
            depth: t.depth,
            layers: t.layers,
            samples: if shape.msaa { DEFAULT_SAMPLES } else { 1 },
            seed,
        })
    }

    pub fn shape(&self) -> Shape {
        Shape { dim: self.dim, array: self.array, msaa: self.samples > 1 }
    }

    /// Checks sizes; returns a message naming the bad field.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("width", self.width),
            ("height", self.height),
            ("depth", self.depth),
            ("layers", self.layers),
            ("samples", self.samples),
        ];
        for (name, v) in fields {
            if v == 0 || v > super::texture::MAX_SIZE {
                return Err(format!("image {name} must be in 1..={}, not {v}", super::texture::MAX_SIZE));
            }
        }
        let flat = |name: &str, v: u32, ok: bool| {
            if v != 1 && !ok { Err(format!("a {:?} image has {name} 1, not {v}", self.dim)) } else { Ok(()) }
        };
        flat("height", self.height, !matches!(self.dim, Dim::Buffer | Dim::D1))?;
        flat("depth", self.depth, self.dim == Dim::D3)?;
        flat("layers", self.layers, self.array)?;
        flat("samples", self.samples, self.dim == Dim::D2)?;
        if self.dim == Dim::Buffer && self.array {
            return Err("buffer images cannot be arrays".into());
        }
        if self.dim == Dim::Cube && self.width != self.height {
            return Err(format!("cube faces are square, not {}×{}", self.width, self.height));
        }
        if self.byte_len() > MAX_BYTES {
            return Err(format!("the image holds {} bytes, more than the model's {MAX_BYTES}", self.byte_len()));
        }
        Ok(())
    }

    /// Layers including cube faces.
    pub fn layer_count(&self) -> u32 {
        if self.dim == Dim::Cube { 6 * self.layers } else { self.layers }
    }

    pub fn texel_count(&self) -> u64 {
        [self.width, self.height, self.depth, self.layer_count(), self.samples].iter().map(|&v| u64::from(v)).product()
    }

    pub fn byte_len(&self) -> u64 {
        self.texel_count() * self.format.texel_bytes() as u64
    }

    /// The byte offset of a texel, or `None` when it is out of bounds.
    pub fn offset(&self, c: TexelCoord) -> Option<usize> {
        if c.x >= self.width
            || c.y >= self.height
            || c.z >= self.depth
            || c.layer >= self.layer_count()
            || c.sample >= self.samples
        {
            return None;
        }
        let [x, y, z, layer, sample] = [c.x, c.y, c.z, c.layer, c.sample].map(u64::from);
        let (w, h, d, s) =
            (u64::from(self.width), u64::from(self.height), u64::from(self.depth), u64::from(self.samples));
        let linear = (((layer * d + z) * h + y) * w + x) * s + sample;
        Some((linear * self.format.texel_bytes() as u64) as usize)
    }

    /// The initial contents (see the module documentation).
    pub fn initial_data(&self) -> Vec<u8> {
        let bytes = self.format.texel_bytes();
        let mut data = Vec::with_capacity(self.byte_len() as usize);
        for t in 0..self.texel_count() {
            let mut texel = 0u128;
            for (i, (c, offset)) in self.format.layout().enumerate() {
                let h = hash(&[self.seed, t as u32, (t >> 32) as u32, i as u32]);
                let bits = match c {
                    C::F32 | C::F16 => c.pack((((h >> 23) as i32 - 256) as f32 / 256.0).to_bits()),
                    C::UFloat(_) => c.pack(((h >> 27) as f32 / 32.0).to_bits()),
                    _ => h & c.mask(),
                };
                texel |= u128::from(bits) << offset;
            }
            data.extend_from_slice(&texel.to_le_bytes()[..bytes]);
        }
        data
    }

    /// `RESQ`: x width, y height (1D arrays: layers), z depth (arrays: layers, cube arrays:
    /// cubes), w samples; dimensions the shape lacks read 0 (a cube map has one cube in z).
    pub fn query_size(&self) -> [u32; 4] {
        let s = self.samples;
        match (self.dim, self.array) {
            (Dim::Buffer, _) | (Dim::D1, false) => [self.width, 0, 0, s],
            (Dim::D1, true) => [self.width, self.layers, 0, s],
            (Dim::D2 | Dim::Rect, false) => [self.width, self.height, 0, s],
            (Dim::Cube, _) | (_, true) => [self.width, self.height, self.layers, s],
            (Dim::D3, _) => [self.width, self.height, self.depth, s],
        }
    }
}

/// Parses the `"images"` object of the inputs JSON: image unit → [`Image`].
pub fn parse_images(value: &serde_json::Value) -> Result<BTreeMap<u32, Image>, String> {
    let map = value.as_object().ok_or("\"images\" must be an object of unit → image")?;
    let mut images = BTreeMap::new();
    for (unit, image) in map {
        let unit: u32 = unit.parse().map_err(|_| format!("image unit `{unit}` is not a number"))?;
        let image: Image = serde_json::from_value(image.clone()).map_err(|e| format!("\"images\".\"{unit}\": {e}"))?;
        image.validate().map_err(|e| format!("\"images\".\"{unit}\": {e}"))?;
        images.insert(unit, image);
    }
    Ok(images)
}

/// The `"images"` object of the inputs JSON.
pub fn images_json(images: &BTreeMap<u32, Image>) -> serde_json::Value {
    serde_json::Value::Object(
        images
            .iter()
            .map(|(unit, image)| (unit.to_string(), serde_json::to_value(image).unwrap_or_default()))
            .collect(),
    )
}

/// A 32-bit avalanche hash (fixed: golden outputs depend on it).
fn hash(words: &[u32]) -> u32 {
    super::hash_words(0x2545_F491, words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(name: &str) -> Format {
        Format::by_name(name).unwrap()
    }

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn every_format_has_whole_bytes_and_a_pipe_name() {
        for format in Format::all() {
            assert_eq!(format.texel_bits() % 8, 0, "{}", format.name());
            assert!(crate::tgsi::formats::by_name(format.name()).is_some(), "{}", format.name());
            assert_eq!(Format::by_name(&format!("PIPE_FORMAT_{}", format.name())), Some(format));
        }
        assert_eq!(fmt("R11G11B10_FLOAT").texel_bytes(), 4);
        assert_eq!(fmt("R32G32B32A32_UINT").texel_bytes(), 16);
        assert!(Format::by_name("R8G8B8_UNORM").is_none(), "3-channel 8-bit formats are not image formats");
    }

    #[test]
    fn unorm_rounds_to_nearest_even_and_clamps() {
        let c = Channel::Unorm(8);
        assert_eq!(c.pack(f(0.5)), 128, "127.5 rounds to the even 128");
        assert_eq!(c.pack(f(0.2)), 51);
        assert_eq!(c.pack(f(0.198)), 50, "50.49 rounds down");
        assert_eq!(c.pack(f(-3.0)), 0);
        assert_eq!(c.pack(f(7.0)), 255);
        assert_eq!(c.pack(f32::NAN.to_bits()), 0);
        assert_eq!(c.pack(f(f32::INFINITY)), 255);
        assert_eq!(c.unpack(255), f(1.0));
        assert_eq!(c.unpack(51), f(0.2));
        assert_eq!(Channel::Unorm(2).pack(f(0.5)), 2, "1.5 of 3 rounds to even 2");
        assert_eq!(Channel::Unorm(16).unpack(0xFFFF), f(1.0));
    }

    #[test]
    fn snorm_rounds_clamps_and_maps_both_minimums_to_minus_one() {
        let c = Channel::Snorm(8);
        assert_eq!(c.pack(f(-1.0)), 0x81, "−1.0 is −127, not −128");
        assert_eq!(c.pack(f(-5.0)), 0x81);
        assert_eq!(c.pack(f(1.0)), 127);
        assert_eq!(c.pack(f(0.5)), 64, "63.5 rounds to the even 64");
        assert_eq!(c.pack(f32::NAN.to_bits()), 0);
        assert_eq!(c.unpack(0x80), f(-1.0), "−128 clamps to −1.0");
        assert_eq!(c.unpack(0x81), f(-1.0));
        assert_eq!(c.unpack(64), f(64.0 / 127.0));
        assert_eq!(Channel::Snorm(16).pack(f(-0.5)), 0xC000, "−16383.5 rounds to the even −16384");
    }

    #[test]
    fn integers_saturate() {
        assert_eq!(Channel::Uint(8).pack(300), 255);
        assert_eq!(Channel::Uint(10).pack(1023), 1023);
        assert_eq!(Channel::Uint(2).pack(u32::MAX), 3);
        assert_eq!(Channel::Sint(8).pack((-200i32) as u32), 0x80);
        assert_eq!(Channel::Sint(8).pack(200), 0x7F);
        assert_eq!(Channel::Sint(16).pack((-2i32) as u32), 0xFFFE);
        assert_eq!(Channel::Sint(16).unpack(0xFFFE), (-2i32) as u32, "sign extension");
        assert_eq!(Channel::Uint(32).pack(0xDEAD_BEEF), 0xDEAD_BEEF);
    }

    #[test]
    fn halves_round_to_nearest_even() {
        let c = Channel::F16;
        assert_eq!(c.pack(f(1.0)), 0x3C00);
        // 1 + 2^-11 is halfway between 1.0 and the next half: ties to even (1.0).
        assert_eq!(c.pack(f(1.0 + 2f32.powi(-11))), 0x3C00);
        assert_eq!(c.pack(f(1.0 + 3.0 * 2f32.powi(-11))), 0x3C02);
        assert_eq!(c.pack(f(1e6)), 0x7C00, "overflow is infinity");
        assert!(f32::from_bits(c.unpack(c.pack(f32::NAN.to_bits()))).is_nan());
        assert_eq!(c.unpack(0xC000), f(-2.0));
    }

    #[test]
    fn packed_unsigned_floats() {
        let r = Channel::UFloat(6);
        let b = Channel::UFloat(5);
        assert_eq!(r.pack(f(1.0)), 15 << 6);
        assert_eq!(b.pack(f(1.0)), 15 << 5);
        assert_eq!(r.pack(f(-1.0)), 0, "negative values become 0");
        assert_eq!(r.pack(f(-0.0)), 0);
        assert_eq!(r.pack(f(1e9)), 0x7BF, "finite overflow saturates to 65024");
        assert_eq!(r.unpack(0x7BF), f(65024.0));
        assert_eq!(r.pack(f(f32::INFINITY)), 0x7C0);
        assert_eq!(r.pack(f32::NAN.to_bits()), 0x7E0);
        // 1 + 1/128 lies halfway between 1 and 1 + 1/64: ties to even (1.0).
        assert_eq!(r.pack(f(1.0 + 1.0 / 128.0)), 15 << 6);
        assert_eq!(r.pack(f(1.0 + 3.0 / 128.0)), (15 << 6) | 2);
        // Denormals: 2^-14 · 3/64.
        assert_eq!(r.pack(f(3.0 * 2f32.powi(-20))), 3);
        assert_eq!(r.unpack(3), f(3.0 * 2f32.powi(-20)));
        assert_eq!(r.pack(f(2f32.powi(-30))), 0);
        // Rounding up out of the denormal range gives the smallest normal.
        assert_eq!(r.pack(f(2f32.powi(-14) - 2f32.powi(-22))), 1 << 6);
        for bits in 0..0x7C0 {
            assert_eq!(r.pack(r.unpack(bits)), bits, "{bits:#x} round trip");
        }
        for bits in 0..0x3E0 {
            assert_eq!(b.pack(b.unpack(bits)), bits, "{bits:#x} round trip");
        }
    }

    #[test]
    fn texel_layouts() {
        let rgba8 = fmt("R8G8B8A8_UNORM");
        assert_eq!(rgba8.pack([f(1.0), f(0.0), f(0.2), f(0.5)]), [255, 0, 51, 128]);
        assert_eq!(rgba8.unpack(&[255, 0, 51, 128]), [f(1.0), f(0.0), f(0.2), f(128.0 / 255.0)]);
        let rgb10a2 = fmt("R10G10B10A2_UINT");
        let t = rgb10a2.pack([1, 2, 3, 3]);
        assert_eq!(u32::from_le_bytes(t.clone().try_into().unwrap()), 1 | 2 << 10 | 3 << 20 | 3 << 30);
        assert_eq!(rgb10a2.unpack(&t), [1, 2, 3, 3]);
        let r11 = fmt("R11G11B10_FLOAT");
        let t = r11.pack([f(1.0), f(2.0), f(0.5), f(9.0)]);
        assert_eq!(u32::from_le_bytes(t.clone().try_into().unwrap()), 15 << 6 | (16 << 6) << 11 | (14 << 5) << 22);
        assert_eq!(r11.unpack(&t), [f(1.0), f(2.0), f(0.5), f(1.0)], "alpha defaults to 1.0");
        let r32i = fmt("R32_SINT");
        assert_eq!(r32i.unpack(&r32i.pack([(-7i32) as u32, 9, 9, 9])), [(-7i32) as u32, 0, 0, 1], "integer alpha 1");
        let rg16 = fmt("R16G16_UNORM");
        assert_eq!(rg16.merge(&[1, 2, 3, 4], [0, f(1.0), 0, 0], 0b10), [1, 2, 0xFF, 0xFF], "only G replaced");
    }

    #[test]
    fn addressing_and_bounds() {
        let img = Image::default_for(TextureTarget::Array2D, fmt("R32_UINT"), 1).unwrap();
        assert_eq!((img.width, img.height, img.layers), (16, 16, 4));
        let at = |x, y, layer| img.offset(TexelCoord { x, y, layer, ..TexelCoord::default() });
        assert_eq!(at(0, 0, 0), Some(0));
        assert_eq!(at(1, 0, 0), Some(4));
        assert_eq!(at(0, 1, 0), Some(64));
        assert_eq!(at(0, 0, 1), Some(1024));
        assert_eq!(at(16, 0, 0), None);
        assert_eq!(at(0, 0, 4), None);
        assert_eq!(img.query_size(), [16, 16, 4, 1]);
        let cube = Image::default_for(TextureTarget::CubeArray, fmt("R8_UINT"), 0).unwrap();
        assert_eq!(cube.layer_count(), 24);
        assert_eq!(cube.query_size(), [16, 16, 4, 1], "cube arrays report cubes");
        let ms = Image::default_for(TextureTarget::Msaa2D, fmt("R8_UINT"), 0).unwrap();
        assert_eq!(ms.offset(TexelCoord { x: 1, sample: 2, ..TexelCoord::default() }), Some(6));
        assert_eq!(ms.offset(TexelCoord { sample: 4, ..TexelCoord::default() }), None);
        assert_eq!(ms.query_size(), [16, 16, 0, 4]);
    }

    #[test]
    fn tgsi_and_packed_coordinates_agree() {
        let targets = [
            TextureTarget::Buffer,
            TextureTarget::Tex1D,
            TextureTarget::Tex2D,
            TextureTarget::Tex3D,
            TextureTarget::Cube,
            TextureTarget::Rect,
            TextureTarget::Array1D,
            TextureTarget::Array2D,
            TextureTarget::CubeArray,
            TextureTarget::Msaa2D,
            TextureTarget::ArrayMsaa2D,
        ];
        for target in targets {
            let shape = Shape::of_target(target).unwrap();
            let c = TexelCoord::from_tgsi(shape, [3, 2, 1, 1]);
            let (w0, w1) = c.to_packed(shape);
            assert_eq!(TexelCoord::from_packed(shape, w0, w1), c, "{target:?}");
        }
        let shape = Shape::of_target(TextureTarget::Array1D).unwrap();
        assert_eq!(TexelCoord::from_tgsi(shape, [5, 7, 9, 9]), TexelCoord { x: 5, layer: 7, ..TexelCoord::default() });
        let shape = Shape::of_target(TextureTarget::ArrayMsaa2D).unwrap();
        assert_eq!(
            TexelCoord::from_packed(shape, 0x0002_0001, 0x0005_0003),
            TexelCoord { x: 1, y: 2, layer: 5, sample: 3, ..TexelCoord::default() }
        );
    }

    #[test]
    fn initial_contents_are_deterministic_and_valid() {
        let img = Image::default_for(TextureTarget::Tex2D, fmt("R16G16B16A16_FLOAT"), 7).unwrap();
        let data = img.initial_data();
        assert_eq!(data.len() as u64, img.byte_len());
        assert_eq!(data, img.initial_data());
        let other = Image { seed: 8, ..img.clone() };
        assert_ne!(data, other.initial_data(), "the seed changes the contents");
        for texel in data.chunks(8) {
            for c in img.format.unpack(texel) {
                let v = f32::from_bits(c);
                assert!((-1.0..1.0).contains(&v) && (v * 256.0).fract() == 0.0, "{v}");
            }
        }
        let r11 = Image::default_for(TextureTarget::Tex2D, fmt("R11G11B10_FLOAT"), 1).unwrap();
        for texel in r11.initial_data().chunks(4) {
            assert!(r11.format.unpack(texel)[..3].iter().all(|&c| (0.0..1.0).contains(&f32::from_bits(c))));
        }
    }

    #[test]
    fn json_form_and_validation() {
        let img: Image =
            serde_json::from_str(r#"{"dim": "2d", "format": "PIPE_FORMAT_R8_UNORM", "width": 4, "height": 2}"#)
                .unwrap();
        assert_eq!(img.format, fmt("R8_UNORM"));
        assert!(img.validate().is_ok());
        assert_eq!(serde_json::to_value(&img).unwrap()["format"], "R8_UNORM");
        let bad: Image =
            serde_json::from_str(r#"{"dim": "1d", "format": "R8_UNORM", "width": 4, "height": 2}"#).unwrap();
        assert!(bad.validate().unwrap_err().contains("height"));
        let err = serde_json::from_str::<Image>(r#"{"dim": "2d", "format": "R8G8B8_UNORM", "width": 4}"#).unwrap_err();
        assert!(err.to_string().contains("R8G8B8_UNORM"), "{err}");
    }
}
