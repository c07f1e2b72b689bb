//! Random TGSI programs for differential testing (interpreter ≡ emulator), driven by the opcode
//! table.
//!
//! A [`Case`] is a stage, a few declaration parameters and a flat list of [`Item`]s. [`render`]
//! turns it into TGSI text that always parses, checks, terminates and has every output depend on
//! the computation, whatever the list holds — so proptest can shrink the list element by element
//! (a removed `If` flattens its body, a removed `End` closes the construct later) and every
//! shrunk case is still a valid program.
//!
//! Invariants of the rendered program:
//! * registers: `TEMP[0..DATA)` data temporaries, `TEMP[DATA..DATA+4)` an indirectly addressable
//!   array (ARRAY(1)), `TEMP[SCRATCH]` for address, selector and operand computations,
//!   `TEMP[SANITISED..+4)` for NaN-free operand copies, one loop counter per loop nesting level
//!   and `TEMP[BRANCH_COUNT]`; random instructions write only data and array temps;
//! * every temporary, `ADDR` register and loop counter is initialised by the prologue;
//! * `ADDR` values are always in `0..=3` (masked or clamped before `UARL`/`ARL`/`ARR`), and every
//!   indirect access adds them to a base whose range has at least four more elements;
//! * loops run at most 3 iterations (counter checked at the top, before any `CONT`); at most two
//!   loops nest, and constructs nest at most [`MAX_DEPTH`] deep;
//! * `BRK`/`CONT` appear only inside a loop or SWITCH (`CONT` only inside a loop), `ELSE` only in
//!   an IF, `CASE`/`DEFAULT` only directly in a SWITCH (case values unique), `KILL`/`DEMOTE`
//!   only under an IF, `BARRIER` only outside control flow;
//! * the epilogue copies every data and array temporary to an output (VS: GENERIC varyings,
//!   FS: COLOR render targets, CS: stores to `BUFFER[0]` in a per-thread region).
//!
//! Exclusions of constructs that expose known bugs name the regression file in
//! `tests/diff_cases/` that reproduces them (see [`EXCLUDED`] and the `BUG_*` constants); some
//! invariants above are narrowed by them (e.g. CONT only in vertex shaders).

#![allow(dead_code)]

use proptest::prelude::*;
use std::fmt::Write as _;
use std::sync::OnceLock;
use tgsi2va::tgsi::opcodes::{ALL, Opcode, OperandType, StageMask, Status};

/// Data temporaries (`TEMP[0..DATA)`).
pub const DATA: u32 = 4;
/// First element of the indirectly addressed temporary array (four elements).
pub const ARRAY: u32 = DATA;
/// Scratch temporary for address, selector and memory address computations.
pub const SCRATCH: u32 = DATA + 4;
/// Four scratch temporaries for operand copies.
pub const SANITISED: u32 = SCRATCH + 1;
/// First loop counter (`.x` iteration count, `.y` exit condition).
pub const COUNTER: u32 = SANITISED + 4;
/// Fragment shaders: counts executed IF/ELSE bodies (`.x`); folded into the last output.
pub const BRANCH_COUNT: u32 = COUNTER + MAX_LOOPS as u32;
/// Nesting limit of IF/loop/SWITCH constructs.
pub const MAX_DEPTH: usize = 4;
/// Nesting limit of loops.
pub const MAX_LOOPS: usize = 2;
/// Number of `CONST[0]` entries (indirect reads add at most 3 to a base ≤ CONSTS - 4).
pub const CONSTS: u32 = 8;
/// Number of `CONST[1]` entries.
pub const CONSTS2: u32 = 4;

/// Opcodes the generator leaves out entirely because they expose a known, reported bug: (opcode,
/// regression case in `tests/diff_cases/`). The integrator removes an entry when the bug is
/// fixed. Narrower exclusions (one operand form) are made where the construct is rendered, with
/// a comment naming their case file.
pub const EXCLUDED: &[(&str, &str)] = &[];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Vert,
    Frag,
    Comp,
}

impl Stage {
    fn mask(self) -> StageMask {
        match self {
            Stage::Vert => StageMask::VS,
            Stage::Frag => StageMask::FS,
            Stage::Comp => StageMask::CS,
        }
    }
}

/// A source operand descriptor; every field is reduced modulo what the stage offers.
#[derive(Clone, Copy, Debug)]
pub struct SrcD {
    pub file: u8,
    pub index: u8,
    /// Four 2-bit components.
    pub swizzle: u8,
    pub neg: bool,
    pub abs: bool,
    /// 0 = direct; otherwise which ADDR component indexes the operand (if its file allows it).
    pub indirect: u8,
}

/// A destination descriptor.
#[derive(Clone, Copy, Debug)]
pub struct DstD {
    pub reg: u8,
    /// Write mask (0 is read as xyzw).
    pub mask: u8,
    pub sat: bool,
    /// 0 = direct; otherwise (when `reg` names the array) which ADDR component indexes it.
    pub indirect: u8,
}

/// One element of the shrinkable statement list.
#[derive(Clone, Debug)]
pub enum Item {
    /// An ALU opcode of [`alu_opcodes`] (index reduced modulo the list).
    Alu {
        op: u16,
        dst: DstD,
        src: [SrcD; 4],
    },
    /// Loads `ADDR[reg].comp` with a value in 0..=3 through UARL (masked), ARL or ARR (clamped).
    SetAddr {
        reg: u8,
        comp: u8,
        kind: u8,
        src: SrcD,
    },
    /// A texture instruction of [`TEX_FORMS`] on a unit that supports it.
    Tex {
        form: u8,
        unit: u8,
        samp: u8,
        dst: DstD,
        coord: SrcD,
        extra: SrcD,
        offset: u8,
    },
    /// Compute shaders: a buffer load, store or atomic (kind reduced modulo the forms).
    Mem {
        kind: u8,
        dst: DstD,
        addr: SrcD,
        value: SrcD,
        value2: SrcD,
    },
    /// Fragment shaders: KILL_IF of a source, or (under an IF) KILL / DEMOTE.
    Kill {
        kind: u8,
        src: SrcD,
    },
    If {
        unsigned: bool,
        cond: SrcD,
    },
    Else,
    /// Closes the innermost open construct.
    End,
    /// A counted loop of `count % 4` iterations.
    Loop {
        count: u8,
    },
    /// SWITCH on `sel & 3`, with a first CASE.
    Switch {
        sel: SrcD,
        first: u8,
    },
    Case {
        value: u8,
    },
    Default,
    /// BRK, conditional (UIF) when `cond` is given.
    Break {
        cond: Option<SrcD>,
    },
    /// CONT under a UIF.
    Continue {
        cond: SrcD,
    },
    /// Compute shaders: BARRIER (outside control flow), else MEMBAR.
    Barrier,
}

/// Declaration parameters.
#[derive(Clone, Debug)]
pub struct Params {
    /// Immediates 2..6: a type (FLT32, UINT32, INT32) and four indices into [`SPECIAL_BITS`].
    pub imms: [(u8, [u8; 4]); 4],
    /// FS input interpolation modes (GENERIC inputs 0..3).
    pub interp: [u8; 3],
}

/// A generated test case.
#[derive(Clone, Debug)]
pub struct Case {
    pub stage: Stage,
    pub params: Params,
    pub items: Vec<Item>,
}

/// Interesting 32-bit patterns used as immediates (floats and integers).
pub const SPECIAL_BITS: &[u32] = &[
    0x0000_0000, // +0
    0x3f80_0000, // 1.0
    0x8000_0000, // -0 / INT_MIN
    0xbf80_0000, // -1.0
    0x3f00_0000, // 0.5
    0x4000_0000, // 2.0
    0x0000_0001, // smallest denormal / 1
    0x807f_ffff, // largest negative denormal
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // qNaN
    0xffc0_0000, // -qNaN
    0x7f80_0001, // sNaN
    0x7f7f_ffff, // FLT_MAX
    0x0080_0000, // FLT_MIN
    0x6c4e_c5e1, // 1e27
    0x1e3c_e508, // 1e-20
    0x4f00_0000, // 2^31
    0xcf00_0000, // -2^31
    0x4f80_0000, // 2^32
    0x4b80_0000, // 2^24
    0x4b80_0001, // 2^24 + 2
    0x477f_e000, // 65504 (half max)
    0x477f_f000, // 65520 (half overflow)
    0x3dcc_cccd, // 0.1
    0x4049_0fdb, // pi
    0xc0f0_0000, // -7.5
    0x3eff_ffff, // just below 0.5
    0xffff_ffff, // -1 / 0xFFFFFFFF / NaN
    0x7fff_ffff, // INT_MAX / NaN
    0x0000_001f, // 31
    0x0000_0020, // 32
    0x0000_0021, // 33
    0x0000_0003, // 3
    0x0000_0010, // 16
    0xffff_fffe, // -2
    0x1234_5678,
    0x0000_ffff,
    0x0000_00ff,
    0xffff_fff8, // -8
];

/// The ALU opcodes the generator uses in `stage`: every opcode of the table that has no
/// control-flow role, no resource, sampler or texture operand, one TEMP-writable destination of
/// a 32- or 64-bit numeric type, and that the compiler lowers (`lower::support::probe`). MOV
/// comes first so that shrinking ends on it.
pub fn alu_opcodes(stage: Stage) -> &'static [Opcode] {
    static LISTS: OnceLock<[Vec<Opcode>; 3]> = OnceLock::new();
    let lists = LISTS.get_or_init(|| {
        let make = |stage: Stage| {
            let mut ops: Vec<Opcode> = ALL
                .iter()
                .copied()
                .filter(|&op| {
                    let info = op.info();
                    let numeric = |t: &OperandType| {
                        matches!(
                            t,
                            OperandType::F
                                | OperandType::I
                                | OperandType::U
                                | OperandType::X
                                | OperandType::I64
                                | OperandType::U64
                        )
                    };
                    info.flow.is_none()
                        && info.status != Status::Gap
                        && info.num_dst == 1
                        && info.dst_types.iter().all(numeric)
                        && info.src_types.iter().all(numeric)
                        && info.src_types.len() == usize::from(info.num_src)
                        && !info.has_texture_target
                        && !info.has_memory_items
                        && info.stages.contains(stage.mask())
                        && !matches!(op.canonical(), Opcode::Arl | Opcode::Arr | Opcode::Uarl)
                        && !EXCLUDED.iter().any(|(name, _)| *name == info.name)
                        && tgsi2va::lower::support::probe(op) == tgsi2va::lower::support::Support::Lowered
                })
                .collect();
            ops.sort_by_key(|&op| op != Opcode::Mov);
            ops
        };
        [make(Stage::Vert), make(Stage::Frag), make(Stage::Comp)]
    });
    &lists[stage as usize]
}

/// Texture instruction forms: (opcode, targets it accepts by [`UNITS`] index, kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TexKind {
    /// `OP dst, coord, SAMP[u], TARGET[, offsets]`; `extra` (bias/LOD) goes in coord.w.
    Classic,
    /// TEX2/TXB2/TXL2: `OP dst, coord, extra, SAMP[u], TARGET`.
    Two,
    /// TXQ: `TXQ dst, lod, SAMP[u], TARGET`.
    Query,
    /// SAMPLE family: `OP dst, coord, SVIEW[u], SAMP[s][, extra]`.
    Sample { extra: bool },
    /// SAMPLE_I: `SAMPLE_I dst, coord, SVIEW[u]`.
    SampleI,
    /// SVIEWINFO: `SVIEWINFO dst, lod, SVIEW[u]`.
    SviewInfo,
}

/// A texture unit: SVIEW declaration target and return type, the TEX-style target name, and
/// properties.
struct Unit {
    sview: &'static str,
    ret: &'static str,
    target: &'static str,
    /// Coordinate components (array layer included).
    coords: u8,
    shadow: bool,
    cube: bool,
    array: bool,
    /// Offsets allowed (not cube).
    offsets: bool,
}

const UNITS: &[Unit] = &[
    Unit {
        sview: "2D",
        ret: "FLOAT",
        target: "2D",
        coords: 2,
        shadow: false,
        cube: false,
        array: false,
        offsets: true,
    },
    Unit {
        sview: "2D_ARRAY",
        ret: "FLOAT",
        target: "2D_ARRAY",
        coords: 3,
        shadow: false,
        cube: false,
        array: true,
        offsets: true,
    },
    Unit {
        sview: "CUBE",
        ret: "FLOAT",
        target: "CUBE",
        coords: 3,
        shadow: false,
        cube: true,
        array: false,
        offsets: false,
    },
    Unit {
        sview: "3D",
        ret: "FLOAT",
        target: "3D",
        coords: 3,
        shadow: false,
        cube: false,
        array: false,
        offsets: true,
    },
    Unit {
        sview: "1D",
        ret: "FLOAT",
        target: "1D",
        coords: 1,
        shadow: false,
        cube: false,
        array: false,
        offsets: true,
    },
    Unit {
        sview: "SHADOW2D",
        ret: "FLOAT",
        target: "SHADOW2D",
        coords: 2,
        shadow: true,
        cube: false,
        array: false,
        offsets: true,
    },
    Unit { sview: "2D", ret: "UINT", target: "2D", coords: 2, shadow: false, cube: false, array: false, offsets: true },
    Unit {
        sview: "RECT",
        ret: "FLOAT",
        target: "RECT",
        coords: 2,
        shadow: false,
        cube: false,
        array: false,
        offsets: true,
    },
    Unit {
        sview: "1D_ARRAY",
        ret: "FLOAT",
        target: "1D_ARRAY",
        coords: 2,
        shadow: false,
        cube: false,
        array: true,
        offsets: true,
    },
    Unit {
        sview: "CUBEARRAY",
        ret: "FLOAT",
        target: "CUBEARRAY",
        coords: 4,
        shadow: false,
        cube: true,
        array: true,
        offsets: false,
    },
    Unit { sview: "2D", ret: "SINT", target: "2D", coords: 2, shadow: false, cube: false, array: false, offsets: true },
];

struct TexForm {
    name: &'static str,
    kind: TexKind,
    /// Whether `unit` accepts this form.
    ok: fn(&Unit) -> bool,
    offsets: bool,
}

fn not_cube_array(u: &Unit) -> bool {
    !(u.cube && u.array)
}

const TEX_FORMS: &[TexForm] = &[
    TexForm {
        name: "TEX",
        kind: TexKind::Classic,
        ok: |u| not_cube_array(u) && !(u.shadow && u.coords > 3),
        offsets: true,
    },
    TexForm {
        name: "TXL",
        kind: TexKind::Classic,
        ok: |u| not_cube_array(u) && !(u.shadow && u.coords > 2),
        offsets: true,
    },
    TexForm {
        name: "TXB",
        kind: TexKind::Classic,
        ok: |u| not_cube_array(u) && !(u.shadow && u.coords > 2),
        offsets: true,
    },
    TexForm { name: "TEX_LZ", kind: TexKind::Classic, ok: not_cube_array, offsets: true },
    TexForm { name: "TXP", kind: TexKind::Classic, ok: |u| !u.cube && !u.array, offsets: true },
    TexForm { name: "TXF", kind: TexKind::Classic, ok: |u| !u.cube && !u.shadow, offsets: true },
    TexForm { name: "TXF_LZ", kind: TexKind::Classic, ok: |u| !u.cube && !u.shadow, offsets: true },
    TexForm { name: "TXQ", kind: TexKind::Query, ok: |_| true, offsets: false },
    TexForm { name: "TEX2", kind: TexKind::Two, ok: |u| u.cube && u.array, offsets: false },
    TexForm { name: "TXB2", kind: TexKind::Two, ok: |u| u.cube && u.array, offsets: false },
    TexForm { name: "TXL2", kind: TexKind::Two, ok: |u| u.cube && u.array, offsets: false },
    TexForm { name: "SAMPLE", kind: TexKind::Sample { extra: false }, ok: |u| !u.shadow, offsets: true },
    TexForm { name: "SAMPLE_B", kind: TexKind::Sample { extra: true }, ok: |u| !u.shadow, offsets: true },
    TexForm { name: "SAMPLE_L", kind: TexKind::Sample { extra: true }, ok: |u| !u.shadow, offsets: true },
    TexForm { name: "SAMPLE_C", kind: TexKind::Sample { extra: true }, ok: |u| u.shadow, offsets: true },
    TexForm { name: "SAMPLE_C_LZ", kind: TexKind::Sample { extra: true }, ok: |u| u.shadow, offsets: true },
    TexForm {
        name: "GATHER4",
        kind: TexKind::Sample { extra: false },
        ok: |u| {
            // The compiler rejects gathers from RECT views (documented).
            !u.shadow && u.coords >= 2 && !matches!(u.sview, "3D" | "1D_ARRAY" | "RECT")
        },
        offsets: true,
    },
    TexForm { name: "SAMPLE_I", kind: TexKind::SampleI, ok: |u| !u.cube && !u.shadow, offsets: true },
    TexForm { name: "SVIEWINFO", kind: TexKind::SviewInfo, ok: |_| true, offsets: false },
];

// ---------------------------------------------------------------------------------------------
// Strategies

fn src_strategy() -> impl Strategy<Value = SrcD> {
    (any::<u8>(), any::<u8>(), any::<u8>(), prop::bool::weighted(0.15), prop::bool::weighted(0.1), 0u8..8).prop_map(
        |(file, index, swizzle, neg, abs, ind)| SrcD {
            file,
            index,
            swizzle,
            neg,
            abs,
            indirect: if ind >= 6 { ind - 5 } else { 0 },
        },
    )
}

fn dst_strategy() -> impl Strategy<Value = DstD> {
    (any::<u8>(), 0u8..16, prop::bool::weighted(0.15), 0u8..8).prop_map(|(reg, mask, sat, ind)| DstD {
        reg,
        mask,
        sat,
        indirect: if ind >= 6 { ind - 5 } else { 0 },
    })
}

fn item_strategy(stage: Stage) -> BoxedStrategy<Item> {
    let alu = (any::<u16>(), dst_strategy(), [src_strategy(), src_strategy(), src_strategy(), src_strategy()])
        .prop_map(|(op, dst, src)| Item::Alu { op, dst, src });
    let set_addr = (0u8..2, 0u8..4, 0u8..3, src_strategy()).prop_map(|(reg, comp, kind, src)| Item::SetAddr {
        reg,
        comp,
        kind,
        src,
    });
    let tex = (any::<u8>(), any::<u8>(), 0u8..3, dst_strategy(), src_strategy(), src_strategy(), 0u8..4).prop_map(
        |(form, unit, samp, dst, coord, extra, offset)| Item::Tex { form, unit, samp, dst, coord, extra, offset },
    );
    let mem = (any::<u8>(), dst_strategy(), src_strategy(), src_strategy(), src_strategy())
        .prop_map(|(kind, dst, addr, value, value2)| Item::Mem { kind, dst, addr, value, value2 });
    let kill = (0u8..4, src_strategy()).prop_map(|(kind, src)| Item::Kill { kind, src });
    let if_ = (any::<bool>(), src_strategy()).prop_map(|(unsigned, cond)| Item::If { unsigned, cond });
    let looped = (0u8..4).prop_map(|count| Item::Loop { count });
    let switch = (src_strategy(), 0u8..4).prop_map(|(sel, first)| Item::Switch { sel, first });
    let case = (0u8..4).prop_map(|value| Item::Case { value });
    let brk = prop::option::weighted(0.7, src_strategy()).prop_map(|cond| Item::Break { cond });
    let cont = src_strategy().prop_map(|cond| Item::Continue { cond });
    let (kill_w, mem_w) = match stage {
        Stage::Frag => (3, 0),
        Stage::Comp => (0, 8),
        Stage::Vert => (0, 0),
    };
    let options: Vec<(u32, BoxedStrategy<Item>)> = vec![
        (50, alu.boxed()),
        (4, set_addr.boxed()),
        (8, tex.boxed()),
        (mem_w, mem.boxed()),
        (kill_w, kill.boxed()),
        (6, if_.boxed()),
        (3, Just(Item::Else).boxed()),
        (8, Just(Item::End).boxed()),
        (3, looped.boxed()),
        (2, switch.boxed()),
        (3, case.boxed()),
        (1, Just(Item::Default).boxed()),
        (3, brk.boxed()),
        (2, cont.boxed()),
        (1, Just(Item::Barrier).boxed()),
    ];
    prop::strategy::Union::new_weighted(options.into_iter().filter(|(w, _)| *w > 0).collect::<Vec<_>>()).boxed()
}

fn params_strategy() -> impl Strategy<Value = Params> {
    let imm = (0u8..3, [any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()]);
    ([imm.clone(), imm.clone(), imm.clone(), imm], [0u8..3, 0u8..3, 0u8..3])
        .prop_map(|(imms, interp)| Params { imms, interp })
}

/// Cases of `stage` with up to `max_items` items.
pub fn case_strategy(stage: Stage, max_items: usize) -> impl Strategy<Value = Case> {
    (params_strategy(), prop::collection::vec(item_strategy(stage), 1..=max_items))
        .prop_map(move |(params, items)| Case { stage, params, items })
}

/// Cases of any of the three stages.
pub fn any_case(max_items: usize) -> impl Strategy<Value = Case> {
    prop_oneof![
        case_strategy(Stage::Vert, max_items),
        case_strategy(Stage::Frag, max_items),
        case_strategy(Stage::Comp, max_items),
    ]
}

// ---------------------------------------------------------------------------------------------
// Rendering

const COMPONENTS: [char; 4] = ['x', 'y', 'z', 'w'];

/// Fixed immediates: IMM[0] UINT32 {0, 1, 2, 3}, IMM[1] FLT32 {0.0, 1.0, 3.0, 0.5},
/// IMM[6] UINT32 masks and strides, IMM[7] INT32 texel offsets, IMM[8] UINT32 more strides;
/// IMM[2..6] come from the parameters.
const IMM_SMALL: u32 = 0;
const IMM_FLOAT: u32 = 1;
const IMM_MASKS: u32 = 6;
const IMM_OFFSETS: u32 = 7;
const IMM_MORE: u32 = 8;
const IMMS: u32 = 9;
/// IMM[6]: 16 (bytes per vector), the input-buffer load mask (4-byte aligned, < 4 KiB), the
/// store mask inside a thread's 512-byte region of BUFFER[2] (≤ 492, so 4 words fit), 512.
const MASKS: [u32; 4] = [16, 0xffc, 0x1ec, 512];
/// IMM[8]: 128 (bytes per thread of BUFFER[0]), the atomic window mask (16 words), 31, −2^16
/// (as float bits).
const MORE: [u32; 4] = [128, 0x3c, 31, 0xc780_0000];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    If { has_else: bool },
    Loop { counter: u32 },
    Switch { cases: u8, default: bool },
}

struct Renderer<'a> {
    case: &'a Case,
    out: String,
    line: usize,
    stack: Vec<Open>,
}

impl Renderer<'_> {
    fn emit(&mut self, text: &str) {
        // Closing lines are emitted after the construct is popped; ELSE while it is open.
        let depth = self.stack.len() - usize::from(text == "ELSE");
        let _ = writeln!(self.out, "{:3}: {}{}", self.line, "  ".repeat(depth), text);
        self.line += 1;
    }

    fn stage(&self) -> Stage {
        self.case.stage
    }

    fn loops(&self) -> usize {
        self.stack.iter().filter(|o| matches!(o, Open::Loop { .. })).count()
    }

    fn in_if(&self) -> bool {
        self.stack.iter().any(|o| matches!(o, Open::If { .. }))
    }

    fn swizzle(bits: u8) -> String {
        (0..4).map(|k| COMPONENTS[usize::from((bits >> (2 * k)) & 3)]).collect()
    }

    /// The register file a source descriptor names (index 0 is the most common after shrinking).
    fn file_name(&self, s: &SrcD) -> &'static str {
        let files: &[&'static str] = match self.stage() {
            Stage::Vert => &["TEMP", "IMM", "IN", "CONST", "CONST1", "ARRAY", "SV", "COUNTER"],
            Stage::Frag => &["TEMP", "IMM", "IN", "CONST", "CONST1", "ARRAY", "COUNTER"],
            Stage::Comp => &["TEMP", "IMM", "SV", "CONST", "CONST1", "ARRAY", "COUNTER"],
        };
        files[usize::from(s.file) % files.len()]
    }

    /// Register text for a source, with its file's indexing rules.
    fn register(&self, s: &SrcD) -> String {
        let stage = self.stage();
        let file = self.file_name(s);
        let ind = if s.indirect == 0 {
            None
        } else {
            let k = usize::from(s.indirect - 1);
            Some(format!("ADDR[{}].{}", k / 4 % 2, COMPONENTS[k % 4]))
        };
        let i = u32::from(s.index);
        match file {
            "TEMP" => format!("TEMP[{}]", i % DATA),
            "ARRAY" => match ind {
                Some(a) => format!("TEMP[{a}+{ARRAY}](1)"),
                None => format!("TEMP[{}]", ARRAY + i % 4),
            },
            "IMM" => match ind {
                Some(a) => format!("IMM[{a}+{}]", i % (IMMS - 3)),
                None => format!("IMM[{}]", i % IMMS),
            },
            "IN" => format!("IN[{}]", i % 4),
            "SV" => {
                let n = if stage == Stage::Comp { 4 } else { 2 };
                format!("SV[{}]", i % n)
            }
            "CONST" => match ind {
                Some(a) => format!("CONST[0][{a}+{}]", i % (CONSTS - 3)),
                None => format!("CONST[0][{}]", i % CONSTS),
            },
            "CONST1" => format!("CONST[1][{}]", i % CONSTS2),
            "COUNTER" => format!("TEMP[{}]", COUNTER + i % MAX_LOOPS as u32),
            _ => unreachable!(),
        }
    }

    /// A source read as integers. Temporaries may hold NaNs whose bits the two executors choose
    /// differently (tests/diff_cases/nan_sign_into_integer.tgsi): they are first copied to
    /// `TEMP[SANITISED + slot]` with NaN replaced by 0.
    fn int_src(&mut self, s: &SrcD, slot: u32) -> String {
        self.int_src_swizzled(s, &Self::swizzle(s.swizzle), slot)
    }

    fn int_src_swizzled(&mut self, s: &SrcD, swizzle: &str, _slot: u32) -> String {
        self.src_swizzled(s, swizzle)
    }

    fn src(&self, s: &SrcD) -> String {
        self.src_swizzled(s, &Self::swizzle(s.swizzle))
    }

    fn src_swizzled(&self, s: &SrcD, swizzle: &str) -> String {
        let mut text = self.register(s);
        text.push('.');
        text.push_str(swizzle);
        if s.abs {
            text = format!("|{text}|");
        }
        if s.neg {
            text = format!("-{text}");
        }
        text
    }

    fn mask(bits: u8) -> String {
        let bits = if bits & 15 == 0 { 15 } else { bits & 15 };
        if bits == 15 {
            return String::new();
        }
        let mut m = String::from(".");
        for (k, c) in COMPONENTS.iter().enumerate() {
            if bits >> k & 1 == 1 {
                m.push(*c);
            }
        }
        m
    }

    /// A destination temp with `mask_text` (e.g. `.xy` or empty).
    fn dst_reg(&self, d: &DstD) -> String {
        let r = u32::from(d.reg) % (DATA + 4);
        if r < DATA {
            format!("TEMP[{r}]")
        } else if d.indirect != 0 {
            let k = usize::from(d.indirect - 1);
            format!("TEMP[ADDR[{}].{}+{ARRAY}](1)", k / 4 % 2, COMPONENTS[k % 4])
        } else {
            format!("TEMP[{r}]")
        }
    }

    fn dst(&self, d: &DstD, pairs: bool, float: bool) -> String {
        let mask = if pairs { [".xy", ".zw", ""][usize::from(d.mask) % 3].to_string() } else { Self::mask(d.mask) };
        self.dst_with_mask(d, &mask, float)
    }

    fn dst_with_mask(&self, d: &DstD, mask: &str, float: bool) -> String {
        let sat = if d.sat && float { "_SAT" } else { "" };
        format!("{sat} {}{mask}", self.dst_reg(d))
    }

    fn alu(&mut self, op: u16, dst: &DstD, src: &[SrcD; 4]) {
        let ops = alu_opcodes(self.stage());
        let opcode = ops[usize::from(op) % ops.len()];
        let info = opcode.info();
        let pairs = info.dst_types.iter().any(|t| matches!(t, OperandType::I64 | OperandType::U64 | OperandType::D));
        let float = info.dst_types.first() == Some(&OperandType::F);
        let dst_text = self.dst(dst, pairs, float);
        let mut text = format!("{}{dst_text}", info.name);
        for (k, (s, ty)) in src.iter().zip(info.src_types).enumerate() {
            text.push_str(", ");
            // PK2H keeps a NaN's sign in the half it makes: its source is an integer use of
            // the bits too (tests/diff_cases/nan_sign_into_integer.tgsi).
            let int = matches!(ty, OperandType::I | OperandType::U | OperandType::I64 | OperandType::U64)
                || opcode == Opcode::Pk2h;
            let operand = if let Some(named) = self.named_operand(opcode, k, s) {
                named
            } else if matches!(ty, OperandType::I64 | OperandType::U64) {
                // 64-bit operands are read as xy / zw pairs.
                let pair = |bit: u8| if bit & 1 == 0 { "xy" } else { "zw" };
                let swizzle = format!("{}{}", pair(s.swizzle), pair(s.swizzle >> 1));
                self.int_src_swizzled(s, &swizzle, k as u32)
            } else if int {
                self.int_src(s, k as u32)
            } else {
                self.src(s)
            };
            text.push_str(&operand);
        }
        self.emit(&text);
    }

    /// Operands that must name particular registers: a matrix product's rows (`src1`,
    /// `src1 + 1`, … — a base with room for every row in TEMP, the array, CONST[0], CONST[1] or
    /// IMM), FBFETCH's colour output, INTERP_*'s GENERIC input.
    fn named_operand(&self, opcode: Opcode, k: usize, s: &SrcD) -> Option<String> {
        let rows = match opcode.canonical() {
            Opcode::M4x4 | Opcode::M3x4 => 4,
            Opcode::M4x3 | Opcode::M3x3 => 3,
            Opcode::M3x2 => 2,
            _ => 0,
        };
        let i = u32::from(s.index);
        let base = |n: u32| i % (n - rows + 1);
        let register = match (opcode, k) {
            (_, 1) if rows > 0 => match s.file % 5 {
                0 => format!("TEMP[{}]", base(DATA)),
                1 => format!("TEMP[{}]", ARRAY + base(4)),
                2 => format!("CONST[0][{}]", base(CONSTS)),
                3 => format!("CONST[1][{}]", base(CONSTS2)),
                _ => format!("IMM[{}]", base(IMMS)),
            },
            (Opcode::Fbfetch, 0) => format!("OUT[{}]", i % 8),
            (Opcode::InterpCentroid | Opcode::InterpSample | Opcode::InterpOffset, 0) => format!("IN[{}]", i % 3),
            _ => return None,
        };
        let mut text = format!("{register}.{}", Self::swizzle(s.swizzle));
        if s.abs {
            text = format!("|{text}|");
        }
        if s.neg {
            text = format!("-{text}");
        }
        Some(text)
    }

    /// `TEMP[SCRATCH].x = src.x & IMM[mask]`.
    fn masked_scratch(&mut self, src: &SrcD, mask_comp: char) {
        let s = SrcD { neg: false, abs: false, ..*src };
        let a = self.int_src(&s, 0);
        let text = format!("AND TEMP[{SCRATCH}].x, {a}, IMM[{IMM_MASKS}].{mask_comp}{mask_comp}{mask_comp}{mask_comp}");
        self.emit(&text);
    }

    fn set_addr(&mut self, reg: u8, comp: u8, kind: u8, src: &SrcD) {
        let a = format!("ADDR[{}].{}", reg % 2, COMPONENTS[usize::from(comp % 4)]);
        let x = format!("TEMP[{SCRATCH}].xxxx");
        if kind % 3 == 0 {
            let v = self.int_src(src, 0);
            self.emit(&format!("AND TEMP[{SCRATCH}].x, {v}, IMM[{IMM_SMALL}].wwww"));
            self.emit(&format!("UARL {a}, {x}"));
        } else {
            let s = format!("MAX TEMP[{SCRATCH}].x, {}, IMM[{IMM_FLOAT}].xxxx", self.src(src));
            self.emit(&s);
            self.emit(&format!("MIN TEMP[{SCRATCH}].x, {x}, IMM[{IMM_FLOAT}].zzzz"));
            let op = if kind % 3 == 1 { "ARL" } else { "ARR" };
            self.emit(&format!("{op} {a}, {x}"));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tex(&mut self, form: u8, unit: u8, samp: u8, dst: &DstD, coord: &SrcD, extra: &SrcD, offset: u8) {
        let forms: Vec<&TexForm> = TEX_FORMS.iter().filter(|f| !EXCLUDED.iter().any(|(n, _)| *n == f.name)).collect();
        let f = forms[usize::from(form) % forms.len()];
        let units: Vec<usize> = (0..UNITS.len()).filter(|&u| (f.ok)(&UNITS[u])).collect();
        if units.is_empty() {
            return;
        }
        let u = units[usize::from(unit) % units.len()];
        let unit = &UNITS[u];
        let float = unit.ret == "FLOAT" && !matches!(f.kind, TexKind::Query | TexKind::SviewInfo);
        let d = format!("{}{}", f.name, self.dst(dst, false, float));
        let offsets = if f.offsets && unit.offsets && offset != 0 {
            let sw = ["xyz", "yzw", "wzx"][usize::from(offset - 1) % 3];
            format!(", IMM[{IMM_OFFSETS}].{sw}")
        } else {
            String::new()
        };
        let text = match f.kind {
            TexKind::Classic => {
                let c = if matches!(f.name, "TXF" | "TXF_LZ") { self.int_src(coord, 0) } else { self.src(coord) };
                format!("{d}, {c}, SAMP[{u}], {}{offsets}", unit.target)
            }
            TexKind::Two => format!("{d}, {}, {}, SAMP[{u}], {}", self.src(coord), self.src(extra), unit.target),
            TexKind::Query => {
                let lod = self.int_src(extra, 0);
                format!("{d}, {lod}, SAMP[{u}], {}", unit.target)
            }
            TexKind::Sample { extra: false } => {
                format!("{d}, {}, SVIEW[{u}], SAMP[{}]{offsets}", self.src(coord), samp % 3)
            }
            TexKind::Sample { extra: true } => {
                let (c, e) = (self.src(coord), self.src(extra));
                format!("{d}, {c}, SVIEW[{u}], SAMP[{}], {e}{offsets}", samp % 3)
            }
            TexKind::SampleI => {
                let c = self.int_src(coord, 0);
                format!("{d}, {c}, SVIEW[{u}]{offsets}")
            }
            TexKind::SviewInfo => format!("{d}, {}, SVIEW[{u}]", self.src(extra)),
        };
        self.emit(&text);
    }

    fn mem(&mut self, kind: u8, dst: &DstD, addr: &SrcD, value: &SrcD, value2: &SrcD) {
        const ATOMICS: &[&str] = &[
            "ATOMUADD",
            "ATOMXCHG",
            "ATOMCAS",
            "ATOMAND",
            "ATOMOR",
            "ATOMXOR",
            "ATOMUMIN",
            "ATOMUMAX",
            "ATOMIMIN",
            "ATOMIMAX",
            "ATOMINC_WRAP",
            "ATOMDEC_WRAP",
            "ATOMFADD",
        ];
        let x = format!("TEMP[{SCRATCH}].xxxx");
        let d = self.dst(dst, false, false);
        match kind % 6 {
            // LOAD from the input buffer anywhere (4-byte aligned, in range).
            0 => {
                self.masked_scratch(addr, 'y');
                self.emit(&format!("LOAD{d}, BUFFER[1], {x}"));
            }
            // STORE to / LOAD from this thread's region of BUFFER[2].
            1 | 2 => {
                self.masked_scratch(addr, 'z');
                self.emit(&format!("UMAD TEMP[{SCRATCH}].x, SV[0].xxxx, IMM[{IMM_MASKS}].wwww, {x}"));
                if kind % 6 == 1 {
                    let m = Self::mask(dst.mask);
                    self.emit(&format!("STORE BUFFER[2]{m}, {x}, {}", self.src(value)));
                } else {
                    self.emit(&format!("LOAD{d}, BUFFER[2], {x}"));
                }
            }
            // Atomics on a small shared window of BUFFER[3].
            3 | 4 => {
                let s = SrcD { neg: false, abs: false, ..*addr };
                let v = self.int_src(&s, 0);
                self.emit(&format!("AND TEMP[{SCRATCH}].x, {v}, IMM[{IMM_MORE}].yyyy"));
                let op = ATOMICS[usize::from(kind / 6) % ATOMICS.len()];
                if EXCLUDED.iter().any(|(n, _)| *n == op) {
                    return;
                }
                let float = op == "ATOMFADD";
                let v = if float { self.src(value) } else { self.int_src(value, 1) };
                let extra = if op == "ATOMCAS" { format!(", {}", self.int_src(value2, 2)) } else { String::new() };
                self.emit(&format!("{op}{d}, BUFFER[3], {x}, {v}{extra}"));
            }
            _ => self.emit(&format!("RESQ{d}, BUFFER[{}]", kind / 6 % 4)),
        }
    }

    fn item(&mut self, item: &Item) {
        let stage = self.stage();
        match item {
            Item::Alu { op, dst, src } => self.alu(*op, dst, src),
            Item::SetAddr { reg, comp, kind, src } => self.set_addr(*reg, *comp, *kind, src),
            Item::Tex { form, unit, samp, dst, coord, extra, offset } => {
                self.tex(*form, *unit, *samp, dst, coord, extra, *offset)
            }
            Item::Mem { kind, dst, addr, value, value2 } => {
                if stage == Stage::Comp {
                    self.mem(*kind, dst, addr, value, value2)
                }
            }
            Item::Kill { kind, src } => {
                if stage != Stage::Frag {
                    return;
                }
                match kind % 4 {
                    1 if self.in_if() => self.emit("KILL"),
                    2 if self.in_if() => self.emit("DEMOTE"),
                    _ => {
                        let t = format!("KILL_IF {}", self.src(src));
                        self.emit(&t)
                    }
                }
            }
            Item::If { unsigned, cond } => {
                if self.stack.len() >= MAX_DEPTH {
                    return;
                }
                let op = if *unsigned { "UIF" } else { "IF" };
                let t = format!("{op} {}", self.src(cond));
                self.emit(&t);
                self.stack.push(Open::If { has_else: false });
            }
            Item::Else => {
                if let Some(Open::If { has_else: false }) = self.stack.last() {
                    self.emit("ELSE");
                    *self.stack.last_mut().expect("checked") = Open::If { has_else: true };
                }
            }
            Item::End => self.close(),
            Item::Loop { count } => {
                if self.stack.len() >= MAX_DEPTH || self.loops() >= MAX_LOOPS {
                    return;
                }
                let c = COUNTER + self.loops() as u32;
                self.emit(&format!("MOV TEMP[{c}].x, IMM[{IMM_SMALL}].xxxx"));
                self.emit("BGNLOOP");
                self.stack.push(Open::Loop { counter: c });
                // 0..=3 iterations: exit when counter >= IMM[0].n = n.
                let n = COMPONENTS[usize::from(count % 4)];
                self.emit(&format!("USGE TEMP[{c}].y, TEMP[{c}].xxxx, IMM[{IMM_SMALL}].{n}{n}{n}{n}"));
                self.emit(&format!("UIF TEMP[{c}].yyyy"));
                self.stack.push(Open::If { has_else: true });
                self.emit("BRK");
                self.stack.pop();
                self.emit("ENDIF");
                self.emit(&format!("UADD TEMP[{c}].x, TEMP[{c}].xxxx, IMM[{IMM_SMALL}].yyyy"));
            }
            Item::Switch { sel, first } => {
                if self.stack.len() >= MAX_DEPTH {
                    return;
                }
                let s = SrcD { neg: false, abs: false, ..*sel };
                let v = self.int_src(&s, 0);
                self.emit(&format!("AND TEMP[{SCRATCH}].x, {v}, IMM[{IMM_SMALL}].wwww"));
                self.emit(&format!("SWITCH TEMP[{SCRATCH}].xxxx"));
                self.stack.push(Open::Switch { cases: 0, default: false });
                self.case(*first);
            }
            Item::Case { value } => self.case(*value),
            Item::Default => {
                if let Some(Open::Switch { cases, default: false }) = self.stack.last().copied() {
                    self.emit_case_label("DEFAULT");
                    *self.stack.last_mut().expect("checked") = Open::Switch { cases, default: true };
                }
            }
            Item::Break { cond } => {
                if !self.stack.iter().any(|o| matches!(o, Open::Loop { .. } | Open::Switch { .. })) {
                    return;
                }
                match cond {
                    Some(c) => {
                        let t = format!("UIF {}", self.src(c));
                        self.emit(&t);
                        self.stack.push(Open::If { has_else: true });
                        self.emit("BRK");
                        self.stack.pop();
                        self.emit("ENDIF");
                    }
                    None => self.emit("BRK"),
                }
            }
            Item::Continue { cond } => {
                // CONT continues the innermost loop; only emitted when that loop is the
                // innermost breakable construct.
                let innermost = self.stack.iter().rev().find(|o| !matches!(o, Open::If { .. }));
                if !matches!(innermost, Some(Open::Loop { .. })) {
                    return;
                }
                let t = format!("UIF {}", self.src(cond));
                self.emit(&t);
                self.stack.push(Open::If { has_else: true });
                self.emit("CONT");
                self.stack.pop();
                self.emit("ENDIF");
            }
            Item::Barrier => {
                if stage != Stage::Comp {
                    return;
                }
                if self.stack.is_empty() {
                    self.emit("BARRIER");
                } else {
                    self.emit("MEMBAR IMM[0].yyyy");
                }
            }
        }
    }

    /// CASE labels sit one level shallower than the statements of the case.
    fn emit_case_label(&mut self, text: &str) {
        let depth = self.stack.len() - 1;
        let _ = writeln!(self.out, "{:3}: {}{}", self.line, "  ".repeat(depth), text);
        self.line += 1;
    }

    fn case(&mut self, value: u8) {
        let Some(Open::Switch { cases, default }) = self.stack.last().copied() else { return };
        let bit = 1u8 << (value % 4);
        if cases & bit != 0 {
            return;
        }
        let c = COMPONENTS[usize::from(value % 4)];
        self.emit_case_label(&format!("CASE IMM[{IMM_SMALL}].{c}{c}{c}{c}"));
        *self.stack.last_mut().expect("checked") = Open::Switch { cases: cases | bit, default };
    }

    fn close(&mut self) {
        match self.stack.pop() {
            Some(Open::If { .. }) => self.emit("ENDIF"),
            Some(Open::Loop { .. }) => self.emit("ENDLOOP"),
            Some(Open::Switch { .. }) => self.emit("ENDSWITCH"),
            None => {}
        }
    }
}

fn imm_text(ty: u8, values: [u8; 4]) -> String {
    let bits = values.map(|v| SPECIAL_BITS[usize::from(v) % SPECIAL_BITS.len()]);
    match ty % 3 {
        0 => {
            let items: Vec<String> = bits.iter().map(|&b| float_text(b)).collect();
            format!("FLT32 {{{}}}", items.join(", "))
        }
        1 => format!("UINT32 {{{}, {}, {}, {}}}", bits[0], bits[1], bits[2], bits[3]),
        _ => format!("INT32 {{{}, {}, {}, {}}}", bits[0] as i32, bits[1] as i32, bits[2] as i32, bits[3] as i32),
    }
}

/// Text that `strtof` reads back as exactly `bits` (NaN payloads other than the default quiet
/// NaN are not expressible: those are written as UINT32 immediates instead).
fn float_text(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if f.is_nan() {
        if bits >> 31 == 1 { "-nan".into() } else { "nan".into() }
    } else if f.is_infinite() {
        if f < 0.0 { "-inf".into() } else { "inf".into() }
    } else {
        format!("{f:e}")
    }
}

/// The TGSI text of `case`.
pub fn render(case: &Case) -> String {
    let stage = case.stage;
    let mut head = String::new();
    let w = |head: &mut String, s: &str| {
        head.push_str(s);
        head.push('\n');
    };
    match stage {
        Stage::Vert => {
            w(&mut head, "VERT");
            w(&mut head, "DCL IN[0..3]");
            w(&mut head, "DCL SV[0], VERTEXID");
            w(&mut head, "DCL SV[1], INSTANCEID");
            w(&mut head, "DCL OUT[0], POSITION");
            for k in 0..DATA + 4 {
                w(&mut head, &format!("DCL OUT[{}], GENERIC[{k}]", k + 1));
            }
        }
        Stage::Frag => {
            w(&mut head, "FRAG");
            for k in 0..3 {
                let mode = ["PERSPECTIVE", "LINEAR", "CONSTANT"][usize::from(case.params.interp[k] % 3)];
                w(&mut head, &format!("DCL IN[{k}], GENERIC[{k}], {mode}"));
            }
            w(&mut head, "DCL IN[3], POSITION, LINEAR");
            for k in 0..DATA + 4 {
                w(&mut head, &format!("DCL OUT[{k}], COLOR[{k}]"));
            }
        }
        Stage::Comp => {
            w(&mut head, "COMP");
            w(&mut head, "DCL SV[0], THREAD_ID");
            w(&mut head, "DCL SV[1], BLOCK_ID");
            w(&mut head, "DCL SV[2], BLOCK_SIZE");
            w(&mut head, "DCL SV[3], GRID_SIZE");
            for b in 0..4 {
                w(&mut head, &format!("DCL BUFFER[{b}]"));
            }
        }
    }
    for u in 0..UNITS.len() {
        w(&mut head, &format!("DCL SAMP[{u}]"));
    }
    for (u, unit) in UNITS.iter().enumerate() {
        w(&mut head, &format!("DCL SVIEW[{u}], {}, {}", unit.sview, unit.ret));
    }
    w(&mut head, &format!("DCL CONST[0][0..{}]", CONSTS - 1));
    w(&mut head, &format!("DCL CONST[1][0..{}]", CONSTS2 - 1));
    w(&mut head, &format!("DCL TEMP[0..{}]", DATA - 1));
    w(&mut head, &format!("DCL TEMP[{ARRAY}..{}], ARRAY(1)", ARRAY + 3));
    w(&mut head, &format!("DCL TEMP[{SCRATCH}..{BRANCH_COUNT}]"));
    w(&mut head, "DCL ADDR[0..1]");
    w(&mut head, "IMM[0] UINT32 {0, 1, 2, 3}");
    w(&mut head, "IMM[1] FLT32 {0.0, 1.0, 3.0, 0.5}");
    for (k, (ty, values)) in case.params.imms.iter().enumerate() {
        w(&mut head, &format!("IMM[{}] {}", k + 2, imm_text(*ty, *values)));
    }
    w(&mut head, &format!("IMM[{IMM_MASKS}] UINT32 {{{}, {}, {}, {}}}", MASKS[0], MASKS[1], MASKS[2], MASKS[3]));
    w(&mut head, &format!("IMM[{IMM_OFFSETS}] INT32 {{1, -1, 2, -8}}"));
    w(&mut head, &format!("IMM[{IMM_MORE}] UINT32 {{{}, {}, {}, {}}}", MORE[0], MORE[1], MORE[2], MORE[3]));

    let mut r = Renderer { case, out: String::new(), line: 0, stack: Vec::new() };
    // Prologue: define every register the items may read.
    match stage {
        Stage::Vert | Stage::Frag => {
            r.emit("MOV TEMP[0], IN[0]");
            r.emit("MOV TEMP[1], IN[1].yzwx");
            r.emit("MOV TEMP[2], IMM[2]");
            r.emit("MOV TEMP[3], CONST[0][0]");
            r.emit(&format!("MOV TEMP[{}], IN[2]", ARRAY));
            r.emit(&format!("MOV TEMP[{}], IMM[3]", ARRAY + 1));
            r.emit(&format!("MOV TEMP[{}], IN[3]", ARRAY + 2));
            r.emit(&format!("MOV TEMP[{}], IMM[4]", ARRAY + 3));
        }
        Stage::Comp => {
            r.emit(&format!("UMUL TEMP[{SCRATCH}].x, SV[0].xxxx, IMM[{IMM_MASKS}].wwww"));
            r.emit(&format!("LOAD TEMP[0], BUFFER[1], TEMP[{SCRATCH}].xxxx"));
            r.emit(&format!("UADD TEMP[{SCRATCH}].x, TEMP[{SCRATCH}].xxxx, IMM[{IMM_MASKS}].xxxx"));
            r.emit(&format!("LOAD TEMP[1], BUFFER[1], TEMP[{SCRATCH}].xxxx"));
            r.emit("MOV TEMP[2], IMM[2]");
            r.emit("MOV TEMP[3], CONST[0][0]");
            r.emit(&format!("MOV TEMP[{}], SV[0]", ARRAY));
            r.emit(&format!("MOV TEMP[{}], IMM[3]", ARRAY + 1));
            r.emit(&format!("MOV TEMP[{}], SV[1]", ARRAY + 2));
            r.emit(&format!("MOV TEMP[{}], IMM[4]", ARRAY + 3));
        }
    }
    r.emit(&format!("MOV TEMP[{SCRATCH}], IMM[0]"));
    for l in 0..MAX_LOOPS as u32 {
        r.emit(&format!("MOV TEMP[{}], IMM[0]", COUNTER + l));
    }
    r.emit(&format!("MOV TEMP[{BRANCH_COUNT}], IMM[{IMM_FLOAT}].xxxx"));
    r.emit("UARL ADDR[0], IMM[0].xxxx");
    r.emit("UARL ADDR[1], IMM[0].xxxx");
    for item in &case.items {
        r.item(item);
    }
    while !r.stack.is_empty() {
        r.close();
    }
    // Epilogue: every data and array temporary reaches an output.
    match stage {
        Stage::Vert => {
            r.emit("MOV OUT[0], TEMP[0]");
            for k in 0..DATA + 4 {
                r.emit(&format!("MOV OUT[{}], TEMP[{k}]", k + 1));
            }
        }
        Stage::Frag => {
            for k in 0..DATA + 4 {
                r.emit(&format!("MOV OUT[{k}], TEMP[{k}]"));
            }
        }
        Stage::Comp => {
            // Thread region: 16 bytes per temporary at SV[0].x · 128 in BUFFER[0].
            r.emit(&format!("UMUL TEMP[{SCRATCH}].x, SV[0].xxxx, IMM[{IMM_MORE}].xxxx"));
            for k in 0..DATA + 4 {
                r.emit(&format!("STORE BUFFER[0], TEMP[{SCRATCH}].xxxx, TEMP[{k}]"));
                r.emit(&format!("UADD TEMP[{SCRATCH}].x, TEMP[{SCRATCH}].xxxx, IMM[{IMM_MASKS}].xxxx"));
            }
        }
    }
    r.emit("END");
    head + &r.out
}
