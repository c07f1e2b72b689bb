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
    SemanticName::ALL.iter().copied().find(|s| s.name().as_bytes() == w)
}

pub fn texture_target(w: &[u8]) -> Option<TextureTarget> {
    TextureTarget::ALL.iter().copied().find(|t| t.name().as_bytes() == w)
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
