//! The TGSI abstract syntax tree.
//!
//! It follows Mesa's token model (what `tgsi_text.c` stores and `tgsi_dump.c` prints), with three
//! additions:
//!
//! 1. **Nothing is silently dropped.** Where Mesa's parser throws information away (a location
//!    without an interpolation mode, per-channel SVIEW return types, an ArrayID on a direct
//!    bracket, a label on BGNSUB), the tree keeps it and the printer writes it back in the place
//!    Mesa's printer would use. Where Mesa would wrap a number into a narrower field, the parser
//!    reports an error instead, so every number stored here fits its Mesa field.
//! 2. **Legacy syntax is kept as written.** Removed opcodes and alias spellings are distinct
//!    [`Opcode`]s; legacy files (`RES`, `PRED`, `IMMX`, …), texture-target spellings, property
//!    names, the unindexed `IMM` form, `FRAG1.1` headers, `_SATNV`, predicates, destination
//!    modulation and the 7.x source modifiers have their own variants, so printing reproduces
//!    the input and lowering can expand them.
//! 3. **Spans.** Every node records where it came from, for diagnostics. Spans take no part in
//!    meaning: compare trees with [`Program::clear_spans`] applied to both.
//!
//! Invariant: for every tree the parser produces, `parse(print(tree)) == tree` (spans cleared),
//! and for every text that any Mesa version's `tgsi_dump` printed, `print(parse(text)) == text`.
//! Statements are kept in text order; Mesa allows declarations after instructions.

use super::opcodes::Opcode;
use crate::diag::Span;
pub use smallvec::{SmallVec, smallvec};

/// Destination operands of an instruction. Stored inline (every opcode but the legacy
/// DFRACEXP has at most one), so parsing allocates nothing per instruction; it derefs to a
/// slice and converts from a `Vec` with `.into()`.
pub type DstOperands = SmallVec<[DstOperand; 1]>;

/// Source operands of an instruction: inline up to three (most opcodes), on the heap beyond.
pub type SrcOperands = SmallVec<[SrcOperand; 3]>;

/// A whole shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub header: Header,
    pub statements: Vec<Statement>,
}

impl Program {
    pub fn processor(&self) -> Processor {
        self.header.processor
    }

    /// The instructions in order; their position is the instruction number branch labels use.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
    }

    pub fn declarations(&self) -> impl Iterator<Item = &Declaration> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Declaration(d) => Some(d),
            _ => None,
        })
    }

    /// The immediates in order; their position is the `IMM[n]` index.
    pub fn immediates(&self) -> impl Iterator<Item = &Immediate> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Immediate(i) => Some(i),
            _ => None,
        })
    }

    pub fn properties(&self) -> impl Iterator<Item = &Property> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Property(p) => Some(p),
            _ => None,
        })
    }

    /// The value of a property, if the shader sets it (the last one wins).
    pub fn property(&self, name: PropertyName) -> Option<PropertyValue> {
        let [value] = self.property_values([name]);
        value
    }

    /// [`Program::property`] of each of `names`, in one walk over the statements.
    pub fn property_values<const N: usize>(&self, names: [PropertyName; N]) -> [Option<PropertyValue>; N] {
        let mut values = [None; N];
        for p in self.properties() {
            let name = p.name.canonical();
            if let Some(k) = names.iter().position(|&n| n == name) {
                values[k] = Some(p.value);
            }
        }
        values
    }

    /// Sets every span in the tree to the empty span at 0, so that trees parsed from different
    /// texts compare equal when they mean the same.
    pub fn clear_spans(&mut self) {
        self.header.span = Span::default();
        for statement in &mut self.statements {
            statement.clear_spans();
        }
    }
}

/// The first word of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub processor: Processor,
    /// Legacy `FRAG1.1`-style version (printed by Mesa ≤ 7.7): (major, minor).
    pub legacy_version: Option<(u32, u32)>,
    pub span: Span,
}

/// Shader stage. `Task` and `Mesh` occur only as `NEXT_SHADER` property values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Processor {
    Vert,
    TessCtrl,
    TessEval,
    Geom,
    Frag,
    Comp,
    Task,
    Mesh,
}

impl Processor {
    pub fn name(self) -> &'static str {
        match self {
            Processor::Vert => "VERT",
            Processor::TessCtrl => "TESS_CTRL",
            Processor::TessEval => "TESS_EVAL",
            Processor::Geom => "GEOM",
            Processor::Frag => "FRAG",
            Processor::Comp => "COMP",
            Processor::Task => "TASK",
            Processor::Mesh => "MESH",
        }
    }
}

/// One statement, in text order.
///
/// Instructions are by far the most common statement and carry their operands inline; boxing
/// them to shrink the enum would cost an allocation per instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Statement {
    Property(Property),
    Declaration(Declaration),
    Immediate(Immediate),
    Instruction(Instruction),
}

impl Statement {
    pub fn span(&self) -> Span {
        match self {
            Statement::Property(p) => p.span,
            Statement::Declaration(d) => d.span,
            Statement::Immediate(i) => i.span,
            Statement::Instruction(i) => i.span,
        }
    }

    fn clear_spans(&mut self) {
        match self {
            Statement::Property(p) => p.span = Span::default(),
            Statement::Declaration(d) => d.span = Span::default(),
            Statement::Immediate(i) => i.span = Span::default(),
            Statement::Instruction(i) => i.clear_spans(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Properties

/// `PROPERTY NAME VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub name: PropertyName,
    pub value: PropertyValue,
    pub span: Span,
}

/// Property names: the 29 of Mesa 25.0.7 (numbered as in Mesa) and two legacy spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PropertyName {
    GsInputPrimitive,
    GsOutputPrimitive,
    GsMaxOutputVertices,
    FsCoordOrigin,
    FsCoordPixelCenter,
    FsColor0WritesAllCbufs,
    FsDepthLayout,
    VsProhibitUcps,
    GsInvocations,
    VsWindowSpacePosition,
    TcsVerticesOut,
    TesPrimMode,
    TesSpacing,
    TesVertexOrderCw,
    TesPointMode,
    NumClipdistEnabled,
    NumCulldistEnabled,
    FsEarlyDepthStencil,
    FsPostDepthCoverage,
    NextShader,
    CsFixedBlockWidth,
    CsFixedBlockHeight,
    CsFixedBlockDepth,
    LegacyMathRules,
    VsBlitSgprsAmd,
    CsUserDataComponentsAmd,
    LayerViewportRelative,
    FsBlendEquationAdvanced,
    SeparableProgram,
    /// `VS_POSITION_WINDOW_SPACE` (10.3), later `VS_WINDOW_SPACE_POSITION`.
    LegacyVsPositionWindowSpace,
    /// `MUL_ZERO_WINS` (17.1 – 22.1), later `LEGACY_MATH_RULES`.
    LegacyMulZeroWins,
}

impl PropertyName {
    pub const ALL: [PropertyName; 31] = [
        PropertyName::GsInputPrimitive,
        PropertyName::GsOutputPrimitive,
        PropertyName::GsMaxOutputVertices,
        PropertyName::FsCoordOrigin,
        PropertyName::FsCoordPixelCenter,
        PropertyName::FsColor0WritesAllCbufs,
        PropertyName::FsDepthLayout,
        PropertyName::VsProhibitUcps,
        PropertyName::GsInvocations,
        PropertyName::VsWindowSpacePosition,
        PropertyName::TcsVerticesOut,
        PropertyName::TesPrimMode,
        PropertyName::TesSpacing,
        PropertyName::TesVertexOrderCw,
        PropertyName::TesPointMode,
        PropertyName::NumClipdistEnabled,
        PropertyName::NumCulldistEnabled,
        PropertyName::FsEarlyDepthStencil,
        PropertyName::FsPostDepthCoverage,
        PropertyName::NextShader,
        PropertyName::CsFixedBlockWidth,
        PropertyName::CsFixedBlockHeight,
        PropertyName::CsFixedBlockDepth,
        PropertyName::LegacyMathRules,
        PropertyName::VsBlitSgprsAmd,
        PropertyName::CsUserDataComponentsAmd,
        PropertyName::LayerViewportRelative,
        PropertyName::FsBlendEquationAdvanced,
        PropertyName::SeparableProgram,
        PropertyName::LegacyVsPositionWindowSpace,
        PropertyName::LegacyMulZeroWins,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PropertyName::GsInputPrimitive => "GS_INPUT_PRIMITIVE",
            PropertyName::GsOutputPrimitive => "GS_OUTPUT_PRIMITIVE",
            PropertyName::GsMaxOutputVertices => "GS_MAX_OUTPUT_VERTICES",
            PropertyName::FsCoordOrigin => "FS_COORD_ORIGIN",
            PropertyName::FsCoordPixelCenter => "FS_COORD_PIXEL_CENTER",
            PropertyName::FsColor0WritesAllCbufs => "FS_COLOR0_WRITES_ALL_CBUFS",
            PropertyName::FsDepthLayout => "FS_DEPTH_LAYOUT",
            PropertyName::VsProhibitUcps => "VS_PROHIBIT_UCPS",
            PropertyName::GsInvocations => "GS_INVOCATIONS",
            PropertyName::VsWindowSpacePosition => "VS_WINDOW_SPACE_POSITION",
            PropertyName::TcsVerticesOut => "TCS_VERTICES_OUT",
            PropertyName::TesPrimMode => "TES_PRIM_MODE",
            PropertyName::TesSpacing => "TES_SPACING",
            PropertyName::TesVertexOrderCw => "TES_VERTEX_ORDER_CW",
            PropertyName::TesPointMode => "TES_POINT_MODE",
            PropertyName::NumClipdistEnabled => "NUM_CLIPDIST_ENABLED",
            PropertyName::NumCulldistEnabled => "NUM_CULLDIST_ENABLED",
            PropertyName::FsEarlyDepthStencil => "FS_EARLY_DEPTH_STENCIL",
            PropertyName::FsPostDepthCoverage => "FS_POST_DEPTH_COVERAGE",
            PropertyName::NextShader => "NEXT_SHADER",
            PropertyName::CsFixedBlockWidth => "CS_FIXED_BLOCK_WIDTH",
            PropertyName::CsFixedBlockHeight => "CS_FIXED_BLOCK_HEIGHT",
            PropertyName::CsFixedBlockDepth => "CS_FIXED_BLOCK_DEPTH",
            PropertyName::LegacyMathRules => "LEGACY_MATH_RULES",
            PropertyName::VsBlitSgprsAmd => "VS_BLIT_SGPRS_AMD",
            PropertyName::CsUserDataComponentsAmd => "CS_USER_DATA_COMPONENTS_AMD",
            PropertyName::LayerViewportRelative => "LAYER_VIEWPORT_RELATIVE",
            PropertyName::FsBlendEquationAdvanced => "FS_BLEND_EQUATION_ADVANCED",
            PropertyName::SeparableProgram => "SEPARABLE_PROGRAM",
            PropertyName::LegacyVsPositionWindowSpace => "VS_POSITION_WINDOW_SPACE",
            PropertyName::LegacyMulZeroWins => "MUL_ZERO_WINS",
        }
    }

    /// The current name a legacy spelling stands for.
    pub fn canonical(self) -> PropertyName {
        match self {
            PropertyName::LegacyVsPositionWindowSpace => PropertyName::VsWindowSpacePosition,
            PropertyName::LegacyMulZeroWins => PropertyName::LegacyMathRules,
            other => other,
        }
    }
}

/// A property value. Integer values are printed signed (`%d`), as Mesa does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyValue {
    Primitive(Primitive),
    CoordOrigin(CoordOrigin),
    PixelCenter(PixelCenter),
    Shader(Processor),
    Uint(u32),
}

/// Primitive names, numbered as in Mesa.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    Points,
    Lines,
    LineLoop,
    LineStrip,
    Triangles,
    TriangleStrip,
    TriangleFan,
    Quads,
    QuadStrip,
    Polygon,
    LinesAdjacency,
    LineStripAdjacency,
    TrianglesAdjacency,
    TriangleStripAdjacency,
    Patches,
}

impl Primitive {
    pub const ALL: [Primitive; 15] = [
        Primitive::Points,
        Primitive::Lines,
        Primitive::LineLoop,
        Primitive::LineStrip,
        Primitive::Triangles,
        Primitive::TriangleStrip,
        Primitive::TriangleFan,
        Primitive::Quads,
        Primitive::QuadStrip,
        Primitive::Polygon,
        Primitive::LinesAdjacency,
        Primitive::LineStripAdjacency,
        Primitive::TrianglesAdjacency,
        Primitive::TriangleStripAdjacency,
        Primitive::Patches,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Primitive::Points => "POINTS",
            Primitive::Lines => "LINES",
            Primitive::LineLoop => "LINE_LOOP",
            Primitive::LineStrip => "LINE_STRIP",
            Primitive::Triangles => "TRIANGLES",
            Primitive::TriangleStrip => "TRIANGLE_STRIP",
            Primitive::TriangleFan => "TRIANGLE_FAN",
            Primitive::Quads => "QUADS",
            Primitive::QuadStrip => "QUAD_STRIP",
            Primitive::Polygon => "POLYGON",
            Primitive::LinesAdjacency => "LINES_ADJACENCY",
            Primitive::LineStripAdjacency => "LINE_STRIP_ADJACENCY",
            Primitive::TrianglesAdjacency => "TRIANGLES_ADJACENCY",
            Primitive::TriangleStripAdjacency => "TRIANGLE_STRIP_ADJACENCY",
            Primitive::Patches => "PATCHES",
        }
    }

    /// Vertices per input primitive: the implied size of `IN[]` in a geometry shader.
    pub fn vertex_count(self) -> u32 {
        match self {
            Primitive::Points => 1,
            Primitive::Lines | Primitive::LineLoop | Primitive::LineStrip => 2,
            Primitive::Triangles | Primitive::TriangleStrip | Primitive::TriangleFan => 3,
            Primitive::Quads | Primitive::QuadStrip => 4,
            Primitive::LinesAdjacency | Primitive::LineStripAdjacency => 4,
            Primitive::TrianglesAdjacency | Primitive::TriangleStripAdjacency => 6,
            Primitive::Polygon | Primitive::Patches => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoordOrigin {
    UpperLeft,
    LowerLeft,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelCenter {
    HalfInteger,
    Integer,
}

// ---------------------------------------------------------------------------------------------
// Registers

/// Register files, numbered as in Mesa, then the legacy files of old Mesa.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum File {
    Null,
    Const,
    Input,
    Output,
    Temp,
    Sampler,
    Address,
    Immediate,
    SystemValue,
    Image,
    SamplerView,
    Buffer,
    Memory,
    ConstBuf,
    HwAtomic,
    /// `LOOP` (7.6 – 7.8): NV loop counters.
    LegacyLoop,
    /// `PRED` (7.7 – 17.0): predicate registers.
    LegacyPredicate,
    /// `IMMX` (7.9 – 9.1): immediate arrays declared with `DCL IMMX[a..b] { … }`.
    LegacyImmediateArray,
    /// `TEMPX` (7.9 – 9.1): temporary arrays.
    LegacyTempArray,
    /// `RES` (7.11 – 11.1): sampler views (7.11 – 8.0) and writable resources (9.0 – 11.1).
    LegacyResource,
}

impl File {
    pub const ALL: [File; 20] = [
        File::Null,
        File::Const,
        File::Input,
        File::Output,
        File::Temp,
        File::Sampler,
        File::Address,
        File::Immediate,
        File::SystemValue,
        File::Image,
        File::SamplerView,
        File::Buffer,
        File::Memory,
        File::ConstBuf,
        File::HwAtomic,
        File::LegacyLoop,
        File::LegacyPredicate,
        File::LegacyImmediateArray,
        File::LegacyTempArray,
        File::LegacyResource,
    ];

    pub fn name(self) -> &'static str {
        match self {
            File::Null => "NULL",
            File::Const => "CONST",
            File::Input => "IN",
            File::Output => "OUT",
            File::Temp => "TEMP",
            File::Sampler => "SAMP",
            File::Address => "ADDR",
            File::Immediate => "IMM",
            File::SystemValue => "SV",
            File::Image => "IMAGE",
            File::SamplerView => "SVIEW",
            File::Buffer => "BUFFER",
            File::Memory => "MEMORY",
            File::ConstBuf => "CONSTBUF",
            File::HwAtomic => "HWATOMIC",
            File::LegacyLoop => "LOOP",
            File::LegacyPredicate => "PRED",
            File::LegacyImmediateArray => "IMMX",
            File::LegacyTempArray => "TEMPX",
            File::LegacyResource => "RES",
        }
    }
}

/// A vector component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    X,
    Y,
    Z,
    W,
}

impl Component {
    pub const ALL: [Component; 4] = [Component::X, Component::Y, Component::Z, Component::W];

    pub fn letter(self) -> char {
        ['x', 'y', 'z', 'w'][self as usize]
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A four-component source swizzle; `[X, Y, Z, W]` is the identity.
pub type Swizzle = [Component; 4];

/// The identity swizzle.
pub const IDENTITY_SWIZZLE: Swizzle = [Component::X, Component::Y, Component::Z, Component::W];

/// A set of components: bit 0 = x, 1 = y, 2 = z, 3 = w.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteMask(pub u8);

impl WriteMask {
    pub const XYZW: WriteMask = WriteMask(0xf);

    pub fn has(self, c: Component) -> bool {
        self.0 & (1 << c as u8) != 0
    }

    pub fn components(self) -> impl Iterator<Item = Component> {
        Component::ALL.into_iter().filter(move |&c| self.has(c))
    }
}

/// One bracket of a register reference: a constant, optionally plus an address register.
///
/// `TEMP[ADDR[0].x+1](2)` is `{ value: 1, indirect: Some(ADDR[0].x), array_id: 2 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Index {
    /// The constant index, or the offset added to the address register (16-bit signed).
    pub value: i32,
    pub indirect: Option<Indirect>,
    /// ArrayID written as `(n)` right after the bracket; 0 when absent. Mesa prints it only on
    /// indirect brackets; we keep it on direct ones too (printed back as written).
    pub array_id: u32,
}

impl Index {
    pub fn direct(value: i32) -> Index {
        Index { value, indirect: None, array_id: 0 }
    }
}

/// The address part of an indirect bracket: `ADDR[0].x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indirect {
    pub file: File,
    pub index: i32,
    pub component: Component,
}

/// A register reference: `FILE[index]` or `FILE[dimension][index]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Register {
    pub file: File,
    /// The first bracket of a two-bracket reference (`CONST[1][2]`: buffer 1; `IN[1][0]`: vertex 1).
    pub dimension: Option<Index>,
    pub index: Index,
}

/// A destination operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DstOperand {
    pub register: Register,
    pub write_mask: WriteMask,
    /// Legacy (≤ 7.7) modulation suffix right after the register, e.g. `TEMP[0]_2X`.
    pub modulate: Option<Modulate>,
    pub span: Span,
}

/// Legacy destination modulation: the result is multiplied (or divided) before it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modulate {
    X1,
    X2,
    X4,
    X8,
    D2,
    D4,
    D8,
}

impl Modulate {
    pub fn suffix(self) -> &'static str {
        match self {
            Modulate::X1 => "_1X",
            Modulate::X2 => "_2X",
            Modulate::X4 => "_4X",
            Modulate::X8 => "_8X",
            Modulate::D2 => "_D2",
            Modulate::D4 => "_D4",
            Modulate::D8 => "_D8",
        }
    }

    pub fn factor(self) -> f32 {
        match self {
            Modulate::X1 => 1.0,
            Modulate::X2 => 2.0,
            Modulate::X4 => 4.0,
            Modulate::X8 => 8.0,
            Modulate::D2 => 0.5,
            Modulate::D4 => 0.25,
            Modulate::D8 => 0.125,
        }
    }
}

/// A source operand: `-|FILE[i].swiz|`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrcOperand {
    pub register: Register,
    pub swizzle: Swizzle,
    pub negate: bool,
    pub absolute: bool,
    /// Source modifiers of Mesa ≤ 7.7 (`2*( … )`, `1-( … )`, extended swizzles); `None` in
    /// anything printed since 2009.
    pub legacy: Option<Box<LegacySourceModifiers>>,
    pub span: Span,
}

/// The extended source modifiers of Mesa ≤ 7.7, applied from the inside out:
/// swizzle (or extended swizzle), plain negate, complement, bias, scale by two, absolute value,
/// outer negate. `SrcOperand::negate`/`absolute` hold the plain negate and the absolute value.
///
/// Without this block (`SrcOperand::legacy == None`, everything printed since 2009) the order
/// is the modern one: `negate` applies after `absolute` (`-|x|`). The parser creates the block
/// only when a legacy feature is written (or for `|-x|`, the negate inside the absolute value),
/// so a tree has one spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacySourceModifiers {
    /// `-( … )` around everything.
    pub outer_negate: bool,
    /// `2*( … )`.
    pub scale2: bool,
    /// `( … )-.5`.
    pub bias: bool,
    /// `1-( … )`.
    pub complement: bool,
    /// `.x-y01`: per-component source (a component, 0 or 1) and negation, replacing the swizzle.
    pub extended_swizzle: Option<[ExtendedSwizzle; 4]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExtendedSwizzle {
    pub source: ExtendedComponent,
    pub negate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtendedComponent {
    Component(Component),
    Zero,
    One,
}

// ---------------------------------------------------------------------------------------------
// Declarations

/// `DCL FILE[range] …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    pub file: File,
    /// `Index2D`: the first of two brackets (`DCL CONST[1][0..3]`). Not recorded for the
    /// per-vertex inputs of GS/TCS/TES and TCS outputs, whose first bracket Mesa discards and
    /// always prints as `[]`.
    pub dimension: Option<u32>,
    pub first: u32,
    pub last: u32,
    pub usage_mask: WriteMask,
    /// `ARRAY(n)`.
    pub array_id: Option<u32>,
    /// `LOCAL` (files other than IMAGE, SVIEW, BUFFER, MEMORY).
    pub local: bool,
    pub semantic: Option<Semantic>,
    /// Attributes of IMAGE, SVIEW, BUFFER, MEMORY and the legacy array files.
    pub resource: Option<ResourceDecl>,
    pub interpolation: Option<Interpolation>,
    /// Sampling location; `None` means CENTER (which Mesa never prints).
    pub location: Option<Location>,
    /// Legacy `, CYLWRAP_XZ`-style attribute (printed by Mesa 7.8 – 21.2): a component mask.
    pub cylindrical_wrap: WriteMask,
    /// `INVARIANT`.
    pub invariant: bool,
    pub span: Span,
}

/// `NAME[index]` semantic, with GS output streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semantic {
    pub name: SemanticName,
    pub index: u32,
    /// `STREAM(x, y, z, w)` on GS outputs (each 0–3); all zero when absent.
    pub stream: [u8; 4],
}

/// Semantic names, numbered as in Mesa, then legacy names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SemanticName {
    Position,
    Color,
    Bcolor,
    Fog,
    Psize,
    Generic,
    Normal,
    Face,
    Edgeflag,
    PrimId,
    Instanceid,
    Vertexid,
    Stencil,
    Clipdist,
    Clipvertex,
    GridSize,
    BlockId,
    BlockSize,
    ThreadId,
    Texcoord,
    Pcoord,
    ViewportIndex,
    Layer,
    Sampleid,
    Samplepos,
    Samplemask,
    Invocationid,
    VertexidNobase,
    Basevertex,
    Patch,
    Tesscoord,
    Tessouter,
    Tessinner,
    Verticesin,
    HelperInvocation,
    Baseinstance,
    Drawid,
    WorkDim,
    SubgroupSize,
    SubgroupInvocation,
    SubgroupEqMask,
    SubgroupGeMask,
    SubgroupGtMask,
    SubgroupLeMask,
    SubgroupLtMask,
    CsUserDataAmd,
    ViewportMask,
    /// `CULLDIST` (9.2 – 11.2).
    LegacyCulldist,
}

impl SemanticName {
    pub const ALL: [SemanticName; 48] = [
        SemanticName::Position,
        SemanticName::Color,
        SemanticName::Bcolor,
        SemanticName::Fog,
        SemanticName::Psize,
        SemanticName::Generic,
        SemanticName::Normal,
        SemanticName::Face,
        SemanticName::Edgeflag,
        SemanticName::PrimId,
        SemanticName::Instanceid,
        SemanticName::Vertexid,
        SemanticName::Stencil,
        SemanticName::Clipdist,
        SemanticName::Clipvertex,
        SemanticName::GridSize,
        SemanticName::BlockId,
        SemanticName::BlockSize,
        SemanticName::ThreadId,
        SemanticName::Texcoord,
        SemanticName::Pcoord,
        SemanticName::ViewportIndex,
        SemanticName::Layer,
        SemanticName::Sampleid,
        SemanticName::Samplepos,
        SemanticName::Samplemask,
        SemanticName::Invocationid,
        SemanticName::VertexidNobase,
        SemanticName::Basevertex,
        SemanticName::Patch,
        SemanticName::Tesscoord,
        SemanticName::Tessouter,
        SemanticName::Tessinner,
        SemanticName::Verticesin,
        SemanticName::HelperInvocation,
        SemanticName::Baseinstance,
        SemanticName::Drawid,
        SemanticName::WorkDim,
        SemanticName::SubgroupSize,
        SemanticName::SubgroupInvocation,
        SemanticName::SubgroupEqMask,
        SemanticName::SubgroupGeMask,
        SemanticName::SubgroupGtMask,
        SemanticName::SubgroupLeMask,
        SemanticName::SubgroupLtMask,
        SemanticName::CsUserDataAmd,
        SemanticName::ViewportMask,
        SemanticName::LegacyCulldist,
    ];

    pub fn name(self) -> &'static str {
        const NAMES: [&str; 48] = [
            "POSITION",
            "COLOR",
            "BCOLOR",
            "FOG",
            "PSIZE",
            "GENERIC",
            "NORMAL",
            "FACE",
            "EDGEFLAG",
            "PRIM_ID",
            "INSTANCEID",
            "VERTEXID",
            "STENCIL",
            "CLIPDIST",
            "CLIPVERTEX",
            "GRID_SIZE",
            "BLOCK_ID",
            "BLOCK_SIZE",
            "THREAD_ID",
            "TEXCOORD",
            "PCOORD",
            "VIEWPORT_INDEX",
            "LAYER",
            "SAMPLEID",
            "SAMPLEPOS",
            "SAMPLEMASK",
            "INVOCATIONID",
            "VERTEXID_NOBASE",
            "BASEVERTEX",
            "PATCH",
            "TESSCOORD",
            "TESSOUTER",
            "TESSINNER",
            "VERTICESIN",
            "HELPER_INVOCATION",
            "BASEINSTANCE",
            "DRAWID",
            "WORK_DIM",
            "SUBGROUP_SIZE",
            "SUBGROUP_INVOCATION",
            "SUBGROUP_EQ_MASK",
            "SUBGROUP_GE_MASK",
            "SUBGROUP_GT_MASK",
            "SUBGROUP_LE_MASK",
            "SUBGROUP_LT_MASK",
            "CS_USER_DATA_AMD",
            "VIEWPORT_MASK",
            "CULLDIST",
        ];
        NAMES[self as usize]
    }

    /// PATCH, TESSINNER, TESSOUTER and PRIM_ID are per patch, not per vertex (printer `[]` rule).
    pub fn is_patch(self) -> bool {
        matches!(self, SemanticName::Patch | SemanticName::Tessinner | SemanticName::Tessouter | SemanticName::PrimId)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    Constant,
    Linear,
    Perspective,
    Color,
}

impl Interpolation {
    pub fn name(self) -> &'static str {
        ["CONSTANT", "LINEAR", "PERSPECTIVE", "COLOR"][self as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    Center,
    Centroid,
    Sample,
}

impl Location {
    pub fn name(self) -> &'static str {
        ["CENTER", "CENTROID", "SAMPLE"][self as usize]
    }
}

/// File-specific declaration attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceDecl {
    /// `DCL IMAGE[n], target[, RAW][, WR][, format]` (also legacy `RES` 9.0 – 11.1).
    Image { target: TextureTarget, format: Format, writable: bool, raw: bool },
    /// `DCL SVIEW[n], target, type[, type, type, type]` (also legacy `RES` 7.11 – 8.0).
    /// All four equal when one type was written.
    SamplerView { target: TextureTarget, return_types: [ReturnType; 4] },
    /// `DCL BUFFER[n][, ATOMIC]`.
    Buffer { atomic: bool },
    /// `DCL MEMORY[n][, GLOBAL|SHARED|PRIVATE|INPUT]`.
    Memory { kind: MemoryKind },
    /// Legacy `DCL IMMX[a..b] { {f, f, f, f}, … }`: raw float bits per element.
    ImmediateArray { values: Vec<[u32; 4]> },
}

/// Texture targets, numbered as in Mesa 25.0.7, then the 7.11 – 8.0 spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureTarget {
    Buffer,
    Tex1D,
    Tex2D,
    Tex3D,
    Cube,
    Rect,
    Shadow1D,
    Shadow2D,
    ShadowRect,
    Array1D,
    Array2D,
    ShadowArray1D,
    ShadowArray2D,
    ShadowCube,
    Msaa2D,
    ArrayMsaa2D,
    CubeArray,
    ShadowCubeArray,
    Unknown,
    /// `1DARRAY` (7.11 – 8.0).
    Legacy1DArray,
    /// `2DARRAY` (7.11 – 8.0).
    Legacy2DArray,
    /// `SHADOW1DARRAY` (8.0).
    LegacyShadow1DArray,
    /// `SHADOW2DARRAY` (8.0).
    LegacyShadow2DArray,
}

impl TextureTarget {
    pub const ALL: [TextureTarget; 23] = [
        TextureTarget::Buffer,
        TextureTarget::Tex1D,
        TextureTarget::Tex2D,
        TextureTarget::Tex3D,
        TextureTarget::Cube,
        TextureTarget::Rect,
        TextureTarget::Shadow1D,
        TextureTarget::Shadow2D,
        TextureTarget::ShadowRect,
        TextureTarget::Array1D,
        TextureTarget::Array2D,
        TextureTarget::ShadowArray1D,
        TextureTarget::ShadowArray2D,
        TextureTarget::ShadowCube,
        TextureTarget::Msaa2D,
        TextureTarget::ArrayMsaa2D,
        TextureTarget::CubeArray,
        TextureTarget::ShadowCubeArray,
        TextureTarget::Unknown,
        TextureTarget::Legacy1DArray,
        TextureTarget::Legacy2DArray,
        TextureTarget::LegacyShadow1DArray,
        TextureTarget::LegacyShadow2DArray,
    ];

    pub fn name(self) -> &'static str {
        const NAMES: [&str; 23] = [
            "BUFFER",
            "1D",
            "2D",
            "3D",
            "CUBE",
            "RECT",
            "SHADOW1D",
            "SHADOW2D",
            "SHADOWRECT",
            "1D_ARRAY",
            "2D_ARRAY",
            "SHADOW1D_ARRAY",
            "SHADOW2D_ARRAY",
            "SHADOWCUBE",
            "2D_MSAA",
            "2D_ARRAY_MSAA",
            "CUBEARRAY",
            "SHADOWCUBEARRAY",
            "UNKNOWN",
            "1DARRAY",
            "2DARRAY",
            "SHADOW1DARRAY",
            "SHADOW2DARRAY",
        ];
        NAMES[self as usize]
    }

    /// The current target a legacy spelling stands for.
    pub fn canonical(self) -> TextureTarget {
        match self {
            TextureTarget::Legacy1DArray => TextureTarget::Array1D,
            TextureTarget::Legacy2DArray => TextureTarget::Array2D,
            TextureTarget::LegacyShadow1DArray => TextureTarget::ShadowArray1D,
            TextureTarget::LegacyShadow2DArray => TextureTarget::ShadowArray2D,
            other => other,
        }
    }
}

/// Sampler-view return types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReturnType {
    Unorm,
    Snorm,
    Sint,
    Uint,
    Float,
}

impl ReturnType {
    pub fn name(self) -> &'static str {
        ["UNORM", "SNORM", "SINT", "UINT", "FLOAT"][self as usize]
    }
}

/// An image format: an index into [`super::formats::FORMATS`]; 0 is `PIPE_FORMAT_NONE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Format(pub u16);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    Global,
    Shared,
    Private,
    Input,
}

impl MemoryKind {
    pub fn name(self) -> &'static str {
        ["GLOBAL", "SHARED", "PRIVATE", "INPUT"][self as usize]
    }
}

// ---------------------------------------------------------------------------------------------
// Immediates

/// `IMM[n] TYPE {v0, v1, v2, v3}` (32-bit types) or `{v0, v1}` (64-bit types).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Immediate {
    pub ty: ImmediateType,
    /// Raw bits. 32-bit types: one value per word. 64-bit types: two values, each as
    /// (low word, high word), so `words = [v0.lo, v0.hi, v1.lo, v1.hi]`.
    pub words: [u32; 4],
    /// Written as `IMM[n] …` (since 9.1) rather than the legacy unindexed `IMM …`.
    pub indexed: bool,
    /// Legacy unindexed form with a space inside the braces, `IMM FLT32 { 1.0000, … }`, as
    /// Mesa ≤ 7.8 printed it. Always `false` when `indexed`.
    pub legacy_spaced_braces: bool,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmediateType {
    Flt32,
    Uint32,
    Int32,
    Flt64,
    Uint64,
    Int64,
}

impl ImmediateType {
    pub fn name(self) -> &'static str {
        ["FLT32", "UINT32", "INT32", "FLT64", "UINT64", "INT64"][self as usize]
    }

    pub fn is_64bit(self) -> bool {
        matches!(self, ImmediateType::Flt64 | ImmediateType::Uint64 | ImmediateType::Int64)
    }
}

// ---------------------------------------------------------------------------------------------
// Instructions

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub opcode: Opcode,
    pub saturate: Saturate,
    /// `_PRECISE`.
    pub precise: bool,
    /// Legacy predicate `(PRED[n].xyzw)` / `(!PRED[n])` before the opcode (7.9 – 17.0).
    pub predicate: Option<Predicate>,
    pub dst: DstOperands,
    pub src: SrcOperands,
    /// The texture-target operand of texture opcodes.
    pub texture_target: Option<TextureTarget>,
    /// Up to four texture offsets.
    pub texture_offsets: Vec<TextureOffset>,
    /// Memory items of memory opcodes (all defaults when none were written).
    pub memory: MemoryItems,
    /// `:N` branch target as written (on IF, UIF, ELSE, BGNLOOP, ENDLOOP, CAL and legacy forms;
    /// also BGNSUB, which Mesa prints but cannot parse). May disagree with the nesting in old
    /// dumps; the checker warns and the control structure comes from the nesting.
    pub label: Option<u32>,
    pub span: Span,
    /// The span of the mnemonic, for diagnostics about the opcode.
    pub opcode_span: Span,
}

impl Instruction {
    fn clear_spans(&mut self) {
        self.span = Span::default();
        self.opcode_span = Span::default();
        for d in &mut self.dst {
            d.span = Span::default();
        }
        for s in &mut self.src {
            s.span = Span::default();
        }
        for o in &mut self.texture_offsets {
            o.span = Span::default();
        }
    }
}

/// Result saturation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Saturate {
    #[default]
    None,
    /// `_SAT`: clamp to [0, 1].
    ZeroOne,
    /// Legacy `_SATNV` (≤ 10.6): clamp to [−1, 1].
    MinusPlusOne,
}

/// Legacy instruction predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    pub negate: bool,
    pub index: u32,
    pub swizzle: Swizzle,
}

/// A texture offset operand: `IMM[0].xyz`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureOffset {
    pub file: File,
    pub index: i32,
    pub swizzle: [Component; 3],
    pub span: Span,
}

/// The trailing items of memory opcodes: qualifiers, a texture target and a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryItems {
    /// Bit set of [`MemoryQualifier`]s.
    pub qualifiers: u8,
    pub texture: TextureTarget,
    pub format: Format,
}

impl Default for MemoryItems {
    fn default() -> MemoryItems {
        MemoryItems { qualifiers: 0, texture: TextureTarget::Buffer, format: Format(0) }
    }
}

/// Memory qualifier bits.
pub struct MemoryQualifier;

impl MemoryQualifier {
    pub const COHERENT: u8 = 1 << 0;
    pub const RESTRICT: u8 = 1 << 1;
    pub const VOLATILE: u8 = 1 << 2;
    pub const STREAM_CACHE_POLICY: u8 = 1 << 3;
    pub const NAMES: [&'static str; 4] = ["COHERENT", "RESTRICT", "VOLATILE", "STREAM_CACHE_POLICY"];
}
