//! Property tests: random valid trees survive print → parse; random byte mutations of valid
//! text never make the parser, checker or printer panic, and whatever parses round-trips.

use proptest::prelude::*;
use tgsi2va::tgsi::ast::*;
use tgsi2va::tgsi::opcodes::{ALL, Opcode};
use tgsi2va::tgsi::{self, formats::FORMATS};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// TGSI-shaped draws from the shared generator.
trait TgsiDraws {
    fn small(&mut self) -> u32;
    fn component(&mut self) -> Component;
    fn swizzle(&mut self) -> Swizzle;
    fn mask(&mut self) -> WriteMask;
}

impl TgsiDraws for Rng {
    fn small(&mut self) -> u32 {
        // Mostly small numbers, sometimes the limits.
        match self.below(10) {
            0 => 32767,
            1 => self.below(32768) as u32,
            _ => self.below(16) as u32,
        }
    }
    fn component(&mut self) -> Component {
        self.pick(&Component::ALL)
    }
    fn swizzle(&mut self) -> Swizzle {
        if self.chance(40) {
            IDENTITY_SWIZZLE
        } else {
            [self.component(), self.component(), self.component(), self.component()]
        }
    }
    fn mask(&mut self) -> WriteMask {
        if self.chance(50) { WriteMask::XYZW } else { WriteMask(1 + self.below(15) as u8) }
    }
}

fn index(g: &mut Rng) -> Index {
    let array_id = if g.chance(15) { g.below(1024) as u32 } else { 0 };
    if g.chance(20) {
        let value = g.below(65536) as i32 - 32768;
        let value = if g.chance(50) { value } else { value % 8 };
        Index {
            value,
            indirect: Some(Indirect { file: g.pick(&File::ALL), index: g.small() as i32, component: g.component() }),
            array_id,
        }
    } else {
        Index { value: g.small() as i32, indirect: None, array_id }
    }
}

fn register(g: &mut Rng) -> Register {
    Register { file: g.pick(&File::ALL), dimension: if g.chance(20) { Some(index(g)) } else { None }, index: index(g) }
}

fn dst(g: &mut Rng) -> DstOperand {
    let modulate = if g.chance(5) {
        Some(g.pick(&[
            Modulate::X1,
            Modulate::X2,
            Modulate::X4,
            Modulate::X8,
            Modulate::D2,
            Modulate::D4,
            Modulate::D8,
        ]))
    } else {
        None
    };
    DstOperand { register: register(g), write_mask: g.mask(), modulate, span: Default::default() }
}

fn src(g: &mut Rng) -> SrcOperand {
    let mut s = SrcOperand {
        register: register(g),
        swizzle: g.swizzle(),
        negate: g.chance(30),
        absolute: g.chance(20),
        legacy: None,
        span: Default::default(),
    };
    if g.chance(10) {
        let mut legacy = LegacySourceModifiers {
            outer_negate: g.chance(40),
            scale2: g.chance(40),
            bias: g.chance(40),
            complement: g.chance(40),
            extended_swizzle: None,
        };
        if g.chance(40) {
            let mut items = [ExtendedSwizzle { source: ExtendedComponent::Zero, negate: false }; 4];
            for item in &mut items {
                item.negate = g.chance(30);
                item.source = match g.below(6) {
                    0 => ExtendedComponent::Zero,
                    1 => ExtendedComponent::One,
                    _ => ExtendedComponent::Component(g.component()),
                };
            }
            legacy.extended_swizzle = Some(items);
        }
        let needed = legacy.outer_negate
            || legacy.scale2
            || legacy.bias
            || legacy.complement
            || legacy.extended_swizzle.is_some()
            || (s.absolute && s.negate);
        if needed {
            s.legacy = Some(Box::new(legacy));
        }
    }
    s
}

fn target(g: &mut Rng) -> TextureTarget {
    g.pick(&TextureTarget::ALL)
}

fn format(g: &mut Rng) -> Format {
    if g.chance(50) { Format(0) } else { Format(g.below(FORMATS.len() as u64) as u16) }
}

fn instruction(g: &mut Rng) -> Instruction {
    let candidates: Vec<Opcode> =
        ALL.iter().copied().filter(|op| !matches!(op, Opcode::Loop | Opcode::EndloopLegacy)).collect();
    let opcode = g.pick(&candidates);
    let info = opcode.info();
    let mut inst = Instruction {
        opcode,
        saturate: g.pick(&[Saturate::None, Saturate::None, Saturate::ZeroOne, Saturate::MinusPlusOne]),
        precise: g.chance(15),
        predicate: if g.chance(5) {
            Some(Predicate { negate: g.chance(50), index: g.small(), swizzle: g.swizzle() })
        } else {
            None
        },
        dst: (0..info.num_dst).map(|_| dst(g)).collect(),
        src: (0..info.num_src).map(|_| src(g)).collect(),
        texture_target: info.has_texture_target.then(|| target(g)),
        texture_offsets: Vec::new(),
        memory: MemoryItems::default(),
        label: None,
        span: Default::default(),
        opcode_span: Default::default(),
    };
    if inst.saturate == Saturate::MinusPlusOne {
        // `_SATNV` (≤ 10.6) and `_PRECISE` (17.2+) never coexisted; the parser has no form for both.
        inst.precise = false;
    }
    match opcode {
        Opcode::Load if matches!(inst.src[1].register.file, File::LegacyResource | File::SamplerView) => {
            inst.src[1].register.file = File::Temp
        }
        Opcode::LoadLegacy => inst.src[1].register.file = g.pick(&[File::LegacyResource, File::SamplerView]),
        _ => {}
    }
    if info.has_texture_offsets {
        for _ in 0..g.below(5) {
            inst.texture_offsets.push(TextureOffset {
                file: g.pick(&File::ALL),
                index: g.small() as i32,
                swizzle: [g.component(), g.component(), g.component()],
                span: Default::default(),
            });
        }
    }
    if info.has_memory_items && g.chance(50) {
        inst.memory = MemoryItems {
            qualifiers: g.below(16) as u8,
            texture: if g.chance(50) { TextureTarget::Buffer } else { target(g) },
            format: format(g),
        };
    }
    if (info.has_branch_label || opcode == Opcode::Bgnsub) && g.chance(50) {
        inst.label = Some(g.below(1 << 24) as u32);
    }
    inst
}

fn declaration(g: &mut Rng, processor: Processor) -> Declaration {
    let file = g.pick(&[
        File::Temp,
        File::Input,
        File::Output,
        File::Const,
        File::Sampler,
        File::Address,
        File::SystemValue,
        File::Image,
        File::SamplerView,
        File::Buffer,
        File::Memory,
        File::HwAtomic,
        File::ConstBuf,
        File::Null,
        File::LegacyResource,
        File::LegacyTempArray,
        File::LegacyImmediateArray,
        File::LegacyPredicate,
    ]);
    let per_vertex = matches!(
        (processor, file),
        (Processor::Geom | Processor::TessEval, File::Input) | (Processor::TessCtrl, File::Input | File::Output)
    );
    let first = if g.chance(10) { 65535 - g.below(4) as u32 } else { g.below(40) as u32 };
    let last = if g.chance(50) { first } else { (first + g.below(8) as u32).min(65535) };
    let resource_file =
        matches!(file, File::Image | File::SamplerView | File::Buffer | File::Memory | File::LegacyResource);
    let mut d = Declaration {
        file,
        dimension: if !per_vertex && g.chance(20) { Some(g.below(65536) as u32) } else { None },
        first,
        last,
        usage_mask: g.mask(),
        array_id: if g.chance(20) { Some(g.below(1024) as u32) } else { None },
        local: !resource_file && g.chance(10),
        semantic: None,
        resource: None,
        interpolation: None,
        location: None,
        cylindrical_wrap: WriteMask(if g.chance(10) { 1 + g.below(15) as u8 } else { 0 }),
        invariant: g.chance(10),
        span: Default::default(),
    };
    if !resource_file && g.chance(60) {
        d.semantic = Some(Semantic {
            name: g.pick(&SemanticName::ALL),
            index: if g.chance(50) { 0 } else { g.below(65536) as u32 },
            stream: if g.chance(20) {
                [g.below(4) as u8, g.below(4) as u8, g.below(4) as u8, g.below(4) as u8]
            } else {
                [0; 4]
            },
        });
    }
    if g.chance(40) {
        let modes = [Interpolation::Constant, Interpolation::Linear, Interpolation::Perspective, Interpolation::Color];
        let mode = g.pick(&modes);
        if d.semantic.is_some() || mode != Interpolation::Color {
            d.interpolation = Some(mode);
        }
    }
    if g.chance(30) {
        d.location = Some(g.pick(&[Location::Centroid, Location::Sample]));
    }
    let types = [ReturnType::Unorm, ReturnType::Snorm, ReturnType::Sint, ReturnType::Uint, ReturnType::Float];
    d.resource = match file {
        File::Image => Some(ResourceDecl::Image {
            target: target(g),
            format: format(g),
            writable: g.chance(50),
            raw: g.chance(50),
        }),
        File::SamplerView => Some(ResourceDecl::SamplerView {
            target: target(g),
            return_types: if g.chance(50) {
                [g.pick(&types); 4]
            } else {
                [g.pick(&types), g.pick(&types), g.pick(&types), g.pick(&types)]
            },
        }),
        File::LegacyResource if g.chance(50) => {
            Some(ResourceDecl::SamplerView { target: target(g), return_types: [g.pick(&types); 4] })
        }
        File::LegacyResource => Some(ResourceDecl::Image {
            target: target(g),
            format: Format(0),
            writable: g.chance(50),
            raw: g.chance(50),
        }),
        File::Buffer => Some(ResourceDecl::Buffer { atomic: g.chance(50) }),
        File::Memory => Some(ResourceDecl::Memory {
            kind: g.pick(&[MemoryKind::Global, MemoryKind::Shared, MemoryKind::Private, MemoryKind::Input]),
        }),
        File::LegacyImmediateArray => {
            d.last = (d.first + g.below(3) as u32).min(65535);
            let count = (d.last - d.first + 1) as usize;
            Some(ResourceDecl::ImmediateArray {
                values: (0..count).map(|_| [g.next() as u32, g.next() as u32, 0x3f80_0000, g.next() as u32]).collect(),
            })
        }
        _ => None,
    };
    d
}

fn immediate(g: &mut Rng) -> Immediate {
    let ty = g.pick(&[
        ImmediateType::Flt32,
        ImmediateType::Uint32,
        ImmediateType::Int32,
        ImmediateType::Flt64,
        ImmediateType::Uint64,
        ImmediateType::Int64,
    ]);
    let mut words = [0u32; 4];
    for w in &mut words {
        *w = match g.below(4) {
            0 => g.next() as u32,
            1 => (g.below(2000) as f32 / 8.0 - 100.0).to_bits(),
            2 => g.pick(&[0x7fc0_0000, 0xffc0_0000, 0x7f80_0000, 0xff80_0000, 0x8000_0000, 1, 0x7fc0_0001]),
            _ => g.below(10) as u32,
        };
    }
    if ty == ImmediateType::Flt64 {
        for pair in words.chunks_mut(2) {
            let v = f64::from_bits(u64::from(pair[0]) | u64::from(pair[1]) << 32);
            if v.is_nan() {
                pair[0] = 0;
                pair[1] = 0x7ff8_0000 | (pair[1] & 0x8000_0000);
            }
        }
    }
    let indexed = g.chance(80);
    Immediate { ty, words, indexed, legacy_spaced_braces: !indexed && g.chance(50), span: Default::default() }
}

fn property(g: &mut Rng) -> Property {
    let name = g.pick(&PropertyName::ALL);
    let value = match name {
        PropertyName::GsInputPrimitive | PropertyName::GsOutputPrimitive => {
            PropertyValue::Primitive(g.pick(&Primitive::ALL))
        }
        PropertyName::FsCoordOrigin => {
            PropertyValue::CoordOrigin(g.pick(&[CoordOrigin::UpperLeft, CoordOrigin::LowerLeft]))
        }
        PropertyName::FsCoordPixelCenter => {
            PropertyValue::PixelCenter(g.pick(&[PixelCenter::HalfInteger, PixelCenter::Integer]))
        }
        PropertyName::NextShader => PropertyValue::Shader(g.pick(&[
            Processor::Vert,
            Processor::TessCtrl,
            Processor::TessEval,
            Processor::Geom,
            Processor::Frag,
            Processor::Comp,
            Processor::Task,
            Processor::Mesh,
        ])),
        _ => PropertyValue::Uint(if g.chance(50) { g.below(10) as u32 } else { g.next() as u32 }),
    };
    Property { name, value, span: Default::default() }
}

fn program(seed: u64) -> Program {
    let mut g = Rng::new(seed);
    let processor = g.pick(&[
        Processor::Vert,
        Processor::TessCtrl,
        Processor::TessEval,
        Processor::Geom,
        Processor::Frag,
        Processor::Comp,
    ]);
    let legacy_version = (matches!(processor, Processor::Vert | Processor::Frag | Processor::Geom) && g.chance(10))
        .then(|| (g.below(20) as u32, g.below(20) as u32));
    let count = g.below(40);
    let statements = (0..count)
        .map(|_| match g.below(10) {
            0 => Statement::Property(property(&mut g)),
            1..=3 => Statement::Declaration(declaration(&mut g, processor)),
            4 => Statement::Immediate(immediate(&mut g)),
            _ => Statement::Instruction(instruction(&mut g)),
        })
        .collect();
    Program { header: Header { processor, legacy_version, span: Default::default() }, statements }
}

fn cleared(mut p: Program) -> Program {
    p.clear_spans();
    p
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_trees_survive_print_and_parse(seed in any::<u64>()) {
        let tree = program(seed);
        let text = tgsi::print(&tree);
        let parsed = tgsi::parse(&text).unwrap_or_else(|e| {
            let line = e.0[0].primary.span.start as usize;
            let start = text[..line].rfind('\n').map_or(0, |i| i + 1);
            let end = text[line..].find('\n').map_or(text.len(), |i| line + i);
            panic!("printed text does not parse: {e}\n{}", &text[start..end])
        });
        prop_assert_eq!(cleared(parsed), tree, "\n{}", text);
        let _ = tgsi::check(&program(seed));
    }

    #[test]
    fn mutated_text_never_panics(which in 0usize..64, edits in proptest::collection::vec((any::<u32>(), any::<u8>(), 0u8..4), 1..8)) {
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tgsi"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let mut bytes = std::fs::read(&files[which % files.len()]).unwrap();
        for (pos, byte, kind) in edits {
            if bytes.is_empty() {
                break;
            }
            let pos = pos as usize % bytes.len();
            const ALPHABET: &[u8] = b"[](),.:|-+_ \n0123456789xyzwTEMPDCLIMM\r\t#";
            let byte = ALPHABET[byte as usize % ALPHABET.len()];
            match kind {
                0 => bytes[pos] = byte,
                1 => bytes.insert(pos, byte),
                2 => { bytes.remove(pos); }
                _ => bytes.truncate(pos),
            }
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(program) = tgsi::parse(&text) {
            let _ = tgsi::check(&program);
            let printed = tgsi::print(&program);
            let reparsed = tgsi::parse(&printed).unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
            prop_assert_eq!(cleared(reparsed), cleared(program));
        }
    }
}
