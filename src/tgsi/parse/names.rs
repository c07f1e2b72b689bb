//! Keyword tables: each function maps an upper-cased word to its enum value.

use crate::tgsi::ast::*;

pub fn processor(w: &[u8]) -> Option<Processor> {
    Some(match w {
        b"VERT" => Processor::Vert,
        b"FRAG" => Processor::Frag,
        b"GEOM" => Processor::Geom,
        b"TESS_CTRL" => Processor::TessCtrl,
        b"TESS_EVAL" => Processor::TessEval,
        b"COMP" => Processor::Comp,
        b"TASK" => Processor::Task,
        b"MESH" => Processor::Mesh,
        _ => return None,
    })
}

/// A register file name as written (any case), without upper-casing first.
#[inline]
pub fn file_any_case(w: &[u8]) -> Option<File> {
    let eq = |name: &[u8]| w.eq_ignore_ascii_case(name);
    let f = match (w.len(), w.first()? | 0x20) {
        (4, b't') if eq(b"TEMP") => File::Temp,
        (2, b'i') if eq(b"IN") => File::Input,
        (3, b'o') if eq(b"OUT") => File::Output,
        (5, b'c') if eq(b"CONST") => File::Const,
        (3, b'i') if eq(b"IMM") => File::Immediate,
        (4, b's') if eq(b"SAMP") => File::Sampler,
        (4, b'a') if eq(b"ADDR") => File::Address,
        (2, b's') if eq(b"SV") => File::SystemValue,
        _ => {
            let mut buf = [0u8; 16];
            let up = buf.get_mut(..w.len())?;
            for (d, s) in up.iter_mut().zip(w) {
                *d = s.to_ascii_uppercase();
            }
            return file(up);
        }
    };
    Some(f)
}

pub fn file(w: &[u8]) -> Option<File> {
    Some(match w {
        b"TEMP" => File::Temp,
        b"IN" => File::Input,
        b"OUT" => File::Output,
        b"CONST" => File::Const,
        b"IMM" => File::Immediate,
        b"SAMP" => File::Sampler,
        b"ADDR" => File::Address,
        b"SV" => File::SystemValue,
        b"SVIEW" => File::SamplerView,
        b"IMAGE" => File::Image,
        b"BUFFER" => File::Buffer,
        b"MEMORY" => File::Memory,
        b"NULL" => File::Null,
        b"CONSTBUF" => File::ConstBuf,
        b"HWATOMIC" => File::HwAtomic,
        b"LOOP" => File::LegacyLoop,
        b"PRED" => File::LegacyPredicate,
        b"IMMX" => File::LegacyImmediateArray,
        b"TEMPX" => File::LegacyTempArray,
        b"RES" => File::LegacyResource,
        _ => return None,
    })
}

pub fn semantic(w: &[u8]) -> Option<SemanticName> {
    let index = match w {
        b"POSITION" => 0,
        b"COLOR" => 1,
        b"BCOLOR" => 2,
        b"FOG" => 3,
        b"PSIZE" => 4,
        b"GENERIC" => 5,
        b"NORMAL" => 6,
        b"FACE" => 7,
        b"EDGEFLAG" => 8,
        b"PRIM_ID" => 9,
        b"INSTANCEID" => 10,
        b"VERTEXID" => 11,
        b"STENCIL" => 12,
        b"CLIPDIST" => 13,
        b"CLIPVERTEX" => 14,
        b"GRID_SIZE" => 15,
        b"BLOCK_ID" => 16,
        b"BLOCK_SIZE" => 17,
        b"THREAD_ID" => 18,
        b"TEXCOORD" => 19,
        b"PCOORD" => 20,
        b"VIEWPORT_INDEX" => 21,
        b"LAYER" => 22,
        b"SAMPLEID" => 23,
        b"SAMPLEPOS" => 24,
        b"SAMPLEMASK" => 25,
        b"INVOCATIONID" => 26,
        b"VERTEXID_NOBASE" => 27,
        b"BASEVERTEX" => 28,
        b"PATCH" => 29,
        b"TESSCOORD" => 30,
        b"TESSOUTER" => 31,
        b"TESSINNER" => 32,
        b"VERTICESIN" => 33,
        b"HELPER_INVOCATION" => 34,
        b"BASEINSTANCE" => 35,
        b"DRAWID" => 36,
        b"WORK_DIM" => 37,
        b"SUBGROUP_SIZE" => 38,
        b"SUBGROUP_INVOCATION" => 39,
        b"SUBGROUP_EQ_MASK" => 40,
        b"SUBGROUP_GE_MASK" => 41,
        b"SUBGROUP_GT_MASK" => 42,
        b"SUBGROUP_LE_MASK" => 43,
        b"SUBGROUP_LT_MASK" => 44,
        b"CS_USER_DATA_AMD" => 45,
        b"VIEWPORT_MASK" => 46,
        b"CULLDIST" => 47,
        _ => return None,
    };
    Some(SemanticName::ALL[index])
}

pub fn texture_target(w: &[u8]) -> Option<TextureTarget> {
    use TextureTarget as T;
    Some(match w {
        b"2D" => T::Tex2D,
        b"BUFFER" => T::Buffer,
        b"1D" => T::Tex1D,
        b"3D" => T::Tex3D,
        b"CUBE" => T::Cube,
        b"RECT" => T::Rect,
        b"2D_ARRAY" => T::Array2D,
        b"SHADOW2D" => T::Shadow2D,
        _ => return TextureTarget::ALL.iter().copied().find(|t| t.name().as_bytes() == w),
    })
}

pub fn return_type(w: &[u8]) -> Option<ReturnType> {
    Some(match w {
        b"UNORM" => ReturnType::Unorm,
        b"SNORM" => ReturnType::Snorm,
        b"SINT" => ReturnType::Sint,
        b"UINT" => ReturnType::Uint,
        b"FLOAT" => ReturnType::Float,
        _ => return None,
    })
}

pub fn interpolation(w: &[u8]) -> Option<Interpolation> {
    Some(match w {
        b"CONSTANT" => Interpolation::Constant,
        b"LINEAR" => Interpolation::Linear,
        b"PERSPECTIVE" => Interpolation::Perspective,
        b"COLOR" => Interpolation::Color,
        _ => return None,
    })
}

pub fn location(w: &[u8]) -> Option<Location> {
    Some(match w {
        b"CENTER" => Location::Center,
        b"CENTROID" => Location::Centroid,
        b"SAMPLE" => Location::Sample,
        _ => return None,
    })
}

pub fn memory_kind(w: &[u8]) -> Option<MemoryKind> {
    Some(match w {
        b"GLOBAL" => MemoryKind::Global,
        b"SHARED" => MemoryKind::Shared,
        b"PRIVATE" => MemoryKind::Private,
        b"INPUT" => MemoryKind::Input,
        _ => return None,
    })
}

pub fn memory_qualifier(w: &[u8]) -> Option<u8> {
    MemoryQualifier::NAMES.iter().position(|n| n.as_bytes() == w).map(|i| 1u8 << i)
}

pub fn immediate_type(w: &[u8]) -> Option<ImmediateType> {
    Some(match w {
        b"FLT32" => ImmediateType::Flt32,
        b"UINT32" => ImmediateType::Uint32,
        b"INT32" => ImmediateType::Int32,
        b"FLT64" => ImmediateType::Flt64,
        b"UINT64" => ImmediateType::Uint64,
        b"INT64" => ImmediateType::Int64,
        _ => return None,
    })
}

pub fn property(w: &[u8]) -> Option<PropertyName> {
    PropertyName::ALL.iter().copied().find(|p| p.name().as_bytes() == w)
}

pub fn primitive(w: &[u8]) -> Option<Primitive> {
    Primitive::ALL.iter().copied().find(|p| p.name().as_bytes() == w)
}

pub fn coord_origin(w: &[u8]) -> Option<CoordOrigin> {
    match w {
        b"UPPER_LEFT" => Some(CoordOrigin::UpperLeft),
        b"LOWER_LEFT" => Some(CoordOrigin::LowerLeft),
        _ => None,
    }
}

pub fn pixel_center(w: &[u8]) -> Option<PixelCenter> {
    match w {
        b"HALF_INTEGER" => Some(PixelCenter::HalfInteger),
        b"INTEGER" => Some(PixelCenter::Integer),
        _ => None,
    }
}

/// An image format written with its `PIPE_FORMAT_` prefix (already upper-cased).
pub fn format(w: &[u8]) -> Option<Format> {
    let rest = w.strip_prefix(b"PIPE_FORMAT_")?;
    crate::tgsi::formats::FORMATS.iter().position(|f| f.as_bytes().eq_ignore_ascii_case(rest)).map(|i| Format(i as u16))
}

/// The closest name in `names` to `word` by edit distance, for "did you mean" help.
pub fn closest<'n>(word: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let word = word.to_ascii_uppercase();
    let limit = (word.len() / 3).max(1);
    names
        .map(|n| (crate::tgsi::opcodes::edit_distance(&word, n), n))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// An opcode mnemonic as a hash key: up to 16 bytes, case-folded with [`super::FOLD`] and
/// zero-padded, as two words. `w` must be an identifier run (`[A-Za-z0-9_]*`), on which the fold
/// is one-to-one up to letter case.
#[inline]
pub fn opcode_key(w: &[u8]) -> Option<[u64; 2]> {
    key_at(w, 0, w.len())
}

/// [`opcode_key`] of the `len` bytes at `at` in `src`, read as two words instead of byte by byte.
#[inline(always)]
pub fn key_at(src: &[u8], at: usize, len: usize) -> Option<[u64; 2]> {
    use super::{FOLD, load8, low_bytes};
    if len == 0 || len > 16 {
        return None;
    }
    let lo = load8(src, at) & low_bytes(len) & FOLD;
    let hi = if len > 8 { load8(src, at + 8) & low_bytes(len - 8) & FOLD } else { 0 };
    Some([lo, hi])
}

/// Opcode lookup by mnemonic (any case) through a hash table built on first use. Returns the
/// current opcode for `LOAD` and `ENDLOOP`, like [`crate::tgsi::opcodes::by_name`]. `w` is an
/// identifier run ([`opcode_key`]).
#[inline]
pub fn opcode(w: &[u8]) -> Option<crate::tgsi::opcodes::Opcode> {
    opcode_by_key(opcode_key(w)?)
}

/// Opcode lookup by [`opcode_key`].
pub fn opcode_by_key(key: [u64; 2]) -> Option<crate::tgsi::opcodes::Opcode> {
    use crate::tgsi::opcodes::{ALL, Opcode, by_name};
    use std::sync::OnceLock;
    const SIZE: usize = 1024;
    static TABLE: OnceLock<Vec<([u64; 2], u16)>> = OnceLock::new();
    fn slot(key: [u64; 2]) -> usize {
        let h = (key[0] ^ key[1].rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 54) as usize
    }
    let table = TABLE.get_or_init(|| {
        let mut t = vec![([0u64; 2], u16::MAX); SIZE];
        for op in ALL {
            let Some(current) = by_name(op.name()) else { continue };
            if current != op {
                continue;
            }
            let Some(key) = opcode_key(op.name().as_bytes()) else { continue };
            let mut i = slot(key);
            while t[i].1 != u16::MAX {
                i = (i + 1) % SIZE;
            }
            t[i] = (key, op as u16);
        }
        t
    });
    let mut i = slot(key);
    loop {
        let (k, op) = table[i];
        if op == u16::MAX {
            return None;
        }
        if k == key {
            let op: Opcode = ALL[usize::from(op)];
            return Some(op);
        }
        i = (i + 1) % SIZE;
    }
}
