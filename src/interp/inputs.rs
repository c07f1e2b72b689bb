//! Deterministic seeded inputs for a program: what `verify` and the tests feed both
//! executors.
//!
//! For every declared input, constant and system value the generator produces a value per
//! lane from a splitmix64 stream seeded with `seed`:
//!
//! * components the program reads as integers (an operand of integer type somewhere, and never
//!   as a float) get small integers 0–15, so that loop bounds, shifts and indices stay sensible;
//! * other components get floats `k/16` with `k` in −32..=32 (exactly representable, so every
//!   executor starts from the same bits);
//! * system values get meaningful values: vertex ids = lane, instance/base values 0, compute
//!   thread ids `(4b + lane, 0, 0)` inside a block of the declared fixed size (or 64×1×1), block
//!   ids and grid sizes consistent with them, subgroup = the quad (size 4, invocation = lane);
//!   fragment POSITION = pixel `(2X + (lane & 1) + ½, 2Y + (lane >> 1) + ½, z, 1)` (without the
//!   ½ under `FS_COORD_PIXEL_CENTER INTEGER`), FACE front,
//!   sample id 0, sample mask 1, sample position (½, ½), helper 0, LAYER 5 (input or system
//!   value: the emulator's r62 byte 0);
//! * every declared BUFFER gets 1024 words (floats `k/16`, or small integers if the program
//!   uses atomics on it);
//! * textures are left to the defaults (`Texture::default_for` per declared target);
//! * every declared IMAGE gets the default image of its target and format
//!   (`exec::image::Image::default_for`; `PIPE_FORMAT_NONE` becomes R32G32B32A32_FLOAT) with a
//!   seed from the stream, so its contents differ per seed.

use crate::exec::LANES;
use crate::exec::io::{Inputs, RegKey};
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::{Opcode, OperandType};
use std::collections::{HashMap, HashSet};

/// Words per generated buffer.
pub const BUFFER_WORDS: usize = 8192;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn float(&mut self) -> u32 {
        ((self.below(65) as i32 - 32) as f32 / 16.0).to_bits()
    }

    fn small_int(&mut self) -> u32 {
        self.below(16) as u32
    }
}

/// Which (file, dimension, index, component) the program reads as integers and as floats.
/// (file, dimension, index, component) keys.
type Uses = HashSet<(File, u32, u32, usize)>;

fn usage(program: &Program) -> (Uses, Uses) {
    let mut ints = HashSet::new();
    let mut floats = HashSet::new();
    for inst in program.instructions() {
        let info = inst.opcode.info();
        for (i, s) in inst.src.iter().enumerate() {
            let r = &s.register;
            if r.index.indirect.is_some() {
                continue;
            }
            let dim = r.dimension.map_or(0, |d| d.value.max(0) as u32);
            let index = r.index.value.max(0) as u32;
            let ty = info.src_types.get(i).copied();
            let int = matches!(ty, Some(OperandType::I | OperandType::U | OperandType::I64 | OperandType::U64));
            for c in s.swizzle {
                let key = (r.file, dim, index, c.index());
                if int {
                    ints.insert(key)
                } else {
                    floats.insert(key)
                };
            }
            // Address registers loaded from an operand: UARL reads integers.
            if inst.opcode == Opcode::Uarl {
                for c in s.swizzle {
                    ints.insert((r.file, dim, index, c.index()));
                }
            }
        }
    }
    (ints, floats)
}

/// Generates inputs for `program` from `seed`.
pub fn generate(program: &Program, seed: u64) -> Inputs {
    let mut rng = Rng(seed ^ 0x5EED_0000_0000_0000);
    let (ints, floats) = usage(program);
    let mut inputs = Inputs::default();
    let processor = program.processor();
    let block = [
        fixed(program, PropertyName::CsFixedBlockWidth).unwrap_or(64).max(4),
        fixed(program, PropertyName::CsFixedBlockHeight).unwrap_or(1).max(1),
        fixed(program, PropertyName::CsFixedBlockDepth).unwrap_or(1).max(1),
    ];
    let first_thread = 4 * rng.below((block[0] / 4).clamp(1, 4) as u64) as u32;
    let block_id = [rng.below(4) as u32, rng.below(2) as u32, 0];
    let grid = [block_id[0] + 1 + rng.below(3) as u32, block_id[1] + 1, 1];
    let pixel = [2 * rng.below(64) as u32, 2 * rng.below(64) as u32];
    let depth = rng.float();
    let integer_centres =
        program.property(PropertyName::FsCoordPixelCenter) == Some(PropertyValue::PixelCenter(PixelCenter::Integer));
    let centre = if integer_centres { 0.0 } else { 0.5 };
    let mut atomic_buffers = HashMap::new();
    for inst in program.instructions() {
        let name = inst.opcode.name();
        if name.starts_with("ATOM")
            && let Some(s) = inst.src.first()
            && s.register.file == File::Buffer
        {
            atomic_buffers.insert(s.register.index.value.max(0) as u32, true);
        }
    }
    for d in program.declarations() {
        let dim = d.dimension.unwrap_or(0);
        match d.file {
            File::Input | File::Const | File::SystemValue => {}
            File::Image => {
                if let Some(ResourceDecl::Image { target, format, .. }) = d.resource {
                    let name = crate::tgsi::formats::FORMATS.get(usize::from(format.0)).copied().unwrap_or("NONE");
                    let name = if name == "NONE" { super::mem::NONE_FORMAT_DEFAULT } else { name };
                    for unit in d.first..=d.last {
                        let seed = rng.next() as u32;
                        let image = crate::exec::image::Format::by_name(name)
                            .and_then(|f| crate::exec::image::Image::default_for(target, f, seed));
                        if let Some(image) = image {
                            inputs.images.insert(unit, image);
                        }
                    }
                }
                continue;
            }
            File::Buffer => {
                for b in d.first..=d.last {
                    let ints = atomic_buffers.contains_key(&b);
                    let words = (0..BUFFER_WORDS).map(|_| if ints { rng.small_int() } else { rng.float() }).collect();
                    inputs.buffers.insert(b, words);
                }
                continue;
            }
            _ => continue,
        }
        for index in d.first..=d.last {
            let key = if d.file == File::Const {
                RegKey::with_dimension(File::Const, dim, index)
            } else {
                RegKey { file: d.file, dimension: None, index }
            };
            let semantic = d.semantic.as_ref().map(|s| s.name);
            let mut lanes = [[0u32; 4]; LANES];
            // Constants are uniform: every lane of a draw reads the same buffer.
            if d.file == File::Const {
                let v: [u32; 4] = std::array::from_fn(|c| {
                    let k = (d.file, dim, index, c);
                    if ints.contains(&k) && !floats.contains(&k) { rng.small_int() } else { rng.float() }
                });
                inputs.registers.insert(key, [v; LANES]);
                continue;
            }
            for (lane, v) in lanes.iter_mut().enumerate() {
                let l = lane as u32;
                let sv = system_value(
                    semantic,
                    d.file,
                    processor,
                    l,
                    SvContext { block, first_thread, block_id, grid, pixel, centre, depth },
                );
                *v = match sv {
                    Some(v) => v,
                    None => std::array::from_fn(|c| {
                        let k = (d.file, dim, index, c);
                        if ints.contains(&k) && !floats.contains(&k) { rng.small_int() } else { rng.float() }
                    }),
                };
                // A point-sprite coordinate is (s, t, 0, 1) (tgsi.rst, TGSI_SEMANTIC_PCOORD).
                if d.file == File::Input && semantic == Some(crate::tgsi::ast::SemanticName::Pcoord) {
                    v[2] = 0f32.to_bits();
                    v[3] = 1f32.to_bits();
                }
            }
            inputs.registers.insert(key, lanes);
        }
    }
    inputs
}

fn fixed(program: &Program, name: PropertyName) -> Option<u32> {
    match program.property(name) {
        Some(PropertyValue::Uint(v)) => Some(v),
        _ => None,
    }
}

#[derive(Clone, Copy)]
struct SvContext {
    block: [u32; 3],
    first_thread: u32,
    block_id: [u32; 3],
    grid: [u32; 3],
    pixel: [u32; 2],
    /// Where in its pixel a fragment's POSITION lies: ½, or 0 for integer pixel centres.
    centre: f32,
    depth: u32,
}

fn system_value(
    semantic: Option<SemanticName>,
    file: File,
    processor: Processor,
    lane: u32,
    cx: SvContext,
) -> Option<[u32; 4]> {
    use SemanticName as S;
    let f = |x: f32| x.to_bits();
    let sv = file == File::SystemValue;
    Some(match semantic? {
        S::Vertexid | S::VertexidNobase if sv => [lane, 0, 0, 0],
        S::Instanceid | S::Basevertex | S::Baseinstance | S::Drawid if sv => [0; 4],
        S::ThreadId => [cx.first_thread + lane, 0, 0, 0],
        S::BlockId => [cx.block_id[0], cx.block_id[1], cx.block_id[2], 0],
        S::BlockSize => [cx.block[0], cx.block[1], cx.block[2], 0],
        S::GridSize => [cx.grid[0], cx.grid[1], cx.grid[2], 0],
        S::WorkDim => [3, 0, 0, 0],
        S::SubgroupSize => [4, 0, 0, 0],
        S::SubgroupInvocation => [lane, 0, 0, 0],
        S::SubgroupEqMask => [1 << lane, 0, 0, 0],
        S::SubgroupGeMask => [0xf & !((1 << lane) - 1), 0, 0, 0],
        S::SubgroupGtMask => [0xf & !((2 << lane) - 1), 0, 0, 0],
        S::SubgroupLeMask => [(2 << lane) - 1, 0, 0, 0],
        S::SubgroupLtMask => [(1 << lane) - 1, 0, 0, 0],
        S::Position if processor == Processor::Frag => [
            f((cx.pixel[0] + (lane & 1)) as f32 + cx.centre),
            f((cx.pixel[1] + (lane >> 1)) as f32 + cx.centre),
            f(f32::from_bits(cx.depth).abs().min(1.0)),
            f(1.0),
        ],
        S::Face if sv => [!0, 0, 0, f(1.0)],
        S::Face => [f(1.0), 0, 0, f(1.0)],
        S::Sampleid | S::HelperInvocation | S::PrimId if sv => [0; 4],
        S::Samplemask if sv => [1, 0, 0, 0],
        S::Samplepos => [f(0.5), f(0.5), 0, 0],
        // Layer 5 of a layered framebuffer (not 0, so that reading it is tested).
        S::Layer if processor == Processor::Frag => [5, 0, 0, 0],
        _ => return None,
    })
}
