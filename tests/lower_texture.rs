//! Texture and derivative lowering (`src/lower/texture.rs`).
//!
//! * **Precise output**: every case of `tests/lower/texture/*.txt` is a tiny TGSI shader; it is
//!   parsed, checked and lowered, the IR is verified, and the IR text plus the texture metadata
//!   (units, flags, push words) must equal the expectation under the case exactly. A case file
//!   is a `#` header, then per case `=== NAME`, the TGSI text, `---`, the expectation.
//!   `BLESS=1 cargo test --test lower_texture` rewrites the expectations; review every change by
//!   eye, they are the specification of the lowering.
//! * **Semantics**: the cube projection, LOD conversion, offset packing and size query
//!   sequences are evaluated instruction by instruction (a small evaluator of the ALU opcodes
//!   they use, with the semantics docs/lowering.md gives them) and compared with the
//!   procedural texture model (`exec::texture`) on many inputs.

use pretty_assertions::assert_eq;
use std::collections::HashMap;
use std::path::PathBuf;
use tgsi2va::exec::texture::{Dim, TexelKind, Texture, cube_project, lod_to_fixed88};
use tgsi2va::ir::{InstKind, Operand, Shader, Src, Value, text, verify};
use tgsi2va::lower::{Lowered, Options, lower};
use tgsi2va::valhall::Opcode;
use tgsi2va::valhall::tables::{Clamp, Condition, RoundMode};

// ---- Precise-output cases ---------------------------------------------------------------------

struct Case {
    name: String,
    input: String,
    expected: String,
}

fn parse_cases(text: &str) -> (String, Vec<Case>) {
    let mut header = String::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut in_expected = false;
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("=== ") {
            cases.push(Case { name: name.trim().to_string(), input: String::new(), expected: String::new() });
            in_expected = false;
            continue;
        }
        match cases.last_mut() {
            None => header.push_str(line),
            Some(_) if !in_expected && line.trim_end() == "---" => in_expected = true,
            Some(case) if in_expected => case.expected.push_str(line),
            Some(case) => case.input.push_str(line),
        }
    }
    for case in &mut cases {
        // One blank line separates cases.
        while case.expected.ends_with("\n\n") {
            case.expected.pop();
        }
    }
    (header, cases)
}

fn lower_text(text: &str) -> Result<Lowered, String> {
    let program = tgsi2va::tgsi::parse(text).map_err(|d| format!("parse: {}\n", d.0[0].message))?;
    let checked: Vec<String> = tgsi2va::tgsi::check(&program)
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("check {}: {}\n", d.code, d.message))
        .collect();
    if !checked.is_empty() {
        return Err(checked.concat());
    }
    lower(&program, &Options::default()).map_err(|d| {
        let mut out = String::new();
        for diag in &d.0 {
            out.push_str(&format!("error {}: {}\n", diag.code, diag.message));
            for note in &diag.notes {
                out.push_str(&format!("  {note}\n"));
            }
        }
        out
    })
}

/// The IR and the metadata the texture lowering fills.
fn render(name: &str, text: &str) -> String {
    let lowered = match lower_text(text) {
        Ok(l) => l,
        Err(e) => return e,
    };
    if let Err(errors) = verify::verify(&lowered.shader) {
        panic!("{name}: invalid IR: {errors:?}\n{}", text::print(&lowered.shader));
    }
    let mut out = text::print(&lowered.shader);
    let meta = &lowered.meta;
    let textures: Vec<String> = meta
        .textures
        .iter()
        .map(|t| format!("{} {} {}", t.unit, t.target, t.return_type.as_deref().unwrap_or("-")))
        .collect();
    out.push_str(&format!("textures: {}\n", if textures.is_empty() { "-".into() } else { textures.join(", ") }));
    let flags = serde_json::to_value(meta.flags).unwrap();
    let set: Vec<&str> =
        flags.as_object().unwrap().iter().filter(|(_, v)| v.as_bool() == Some(true)).map(|(k, _)| k.as_str()).collect();
    out.push_str(&format!("flags: {}\n", if set.is_empty() { "-".into() } else { set.join(", ") }));
    let fau: Vec<String> = meta
        .fau
        .iter()
        .map(|w| match &w.source {
            tgsi2va::emit::meta::FauSource::Literal { value } => format!("u{} = {value:#x}", w.word),
            tgsi2va::emit::meta::FauSource::Sysval { name, component } => {
                format!("u{} = {name}.{}", w.word, ["x", "y", "z", "w"][*component as usize])
            }
            tgsi2va::emit::meta::FauSource::Constant { buffer, index, component } => {
                format!("u{} = CONST[{buffer}][{index}].{}", w.word, ["x", "y", "z", "w"][*component as usize])
            }
        })
        .collect();
    out.push_str(&format!("fau: {}\n", if fau.is_empty() { "-".into() } else { fau.join(", ") }));
    out
}

#[test]
fn precise_output() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lower/texture");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "case files missing in {}", dir.display());
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    let mut names = HashMap::new();
    let mut total = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let (header, cases) = parse_cases(&text);
        let mut rewritten = header.trim_end().to_string();
        rewritten.push('\n');
        for case in &cases {
            total += 1;
            if let Some(other) = names.insert(case.name.clone(), file.clone()) {
                panic!("case {} appears in {} and {}", case.name, other.display(), file.display());
            }
            let actual = render(&case.name, &case.input);
            if actual != case.expected {
                failures.push((case.name.clone(), case.expected.clone(), actual.clone()));
            }
            rewritten.push_str(&format!("\n=== {}\n{}---\n{}", case.name, case.input, actual));
        }
        if bless {
            std::fs::write(file, rewritten).unwrap();
        }
    }
    eprintln!("{total} cases in {} files", files.len());
    if bless {
        return;
    }
    if let Some((name, expected, actual)) = failures.first() {
        let others: Vec<&str> = failures.iter().skip(1).map(|f| f.0.as_str()).collect();
        eprintln!("mismatching cases: {name} {others:?} (BLESS=1 rewrites them)");
        assert_eq!(actual, expected, "case {name}");
    }
}

// ---- Metadata -----------------------------------------------------------------------------------

fn lowered(text: &str) -> Lowered {
    lower_text(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn metadata_records_units_targets_and_return_types() {
    let l = lowered(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL SAMP[0]\nDCL SAMP[2]\nDCL SAMP[3]\nDCL SVIEW[2], 3D, UINT\n\
         DCL SVIEW[7], CUBEARRAY, SINT\nDCL TEMP[0]\n  0: TEX TEMP[0], IN[0], SAMP[0], SHADOW2D\n\
           1: TXF TEMP[0], IN[0], SAMP[2], 3D\n  2: TXQ TEMP[0], IN[0], SAMP[3], 1D_ARRAY\n\
           3: SAMPLE TEMP[0], IN[0], SVIEW[7], SAMP[0]\n  4: END\n",
    );
    let got: Vec<(u32, &str, Option<&str>)> =
        l.meta.textures.iter().map(|t| (t.unit, t.target.as_str(), t.return_type.as_deref())).collect();
    assert_eq!(
        got,
        vec![(0, "SHADOW2D", None), (2, "3D", Some("UINT")), (3, "1D_ARRAY", None), (7, "CUBEARRAY", Some("SINT"))]
    );
    assert!(l.meta.flags.needs_helper_threads);
    assert!(!l.meta.flags.can_discard);
}

#[test]
fn helper_threads_only_for_implicit_lod_and_derivatives() {
    let fs = |body: &str| {
        format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0]\n  0: {body}\n  1: END\n"
        )
    };
    for (body, helpers) in [
        ("TEX TEMP[0], IN[0], SAMP[0], 2D", true),
        ("TXB TEMP[0], IN[0], SAMP[0], 2D", true),
        ("TXP TEMP[0], IN[0], SAMP[0], 2D", true),
        ("SAMPLE_C TEMP[0], IN[0], SVIEW[0], SAMP[0], IN[0].zzzz", true),
        ("DDY TEMP[0], IN[0]", true),
        ("DDX_FINE TEMP[0], IN[0]", true),
        ("TXL TEMP[0], IN[0], SAMP[0], 2D", false),
        ("TEX_LZ TEMP[0], IN[0], SAMP[0], 2D", false),
        ("TXF TEMP[0], IN[0], SAMP[0], 2D", false),
        ("TG4 TEMP[0], IN[0], IN[0], SAMP[0], SHADOW2D", false),
        ("TXQ TEMP[0], IN[0], SAMP[0], 2D", false),
        ("SAMPLE_C_LZ TEMP[0], IN[0], SVIEW[0], SAMP[0], IN[0].zzzz", false),
    ] {
        let l = lowered(&fs(body));
        assert_eq!(l.meta.flags.needs_helper_threads, helpers, "{body}");
    }
    let vs = "VERT\nDCL IN[0]\nDCL SAMP[0]\nDCL TEMP[0]\n  0: TEX TEMP[0], IN[0], SAMP[0], 2D\n  1: END\n";
    assert!(!lowered(vs).meta.flags.needs_helper_threads, "no implicit LOD outside fragment shaders");
}

#[test]
fn handles_follow_the_narrow_packing() {
    // texture 0 + sampler 0 → 0x20001800, texture 2 + sampler 1 → 0x20021801 (§A.4).
    let l = lowered(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL SAMP[0..1]\nDCL SVIEW[0], 2D, FLOAT\nDCL SVIEW[2], 2D, FLOAT\n\
         DCL TEMP[0]\n  0: SAMPLE TEMP[0], IN[0], SVIEW[2], SAMP[1]\n  1: TEX TEMP[0], IN[0], SAMP[0], 2D\n\
           2: TXF TEMP[0], IN[0], SAMP[1], 2D\n  3: END\n",
    );
    let literals: Vec<u32> = l
        .meta
        .fau
        .iter()
        .filter_map(|w| match w.source {
            tgsi2va::emit::meta::FauSource::Literal { value } => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(literals, vec![0x2002_1801, 0, 0x2000_1800, 0, 0x2001_1800, 0]);
}

// ---- Evaluating the emitted ALU sequences --------------------------------------------------------

/// Evaluates a straight-line shader's ALU instructions (blocks in layout order), with the
/// semantics docs/lowering.md defines for them (IEEE f32, minNum/maxNum, clamps send NaN to 0,
/// FRCP is the correctly rounded reciprocal). Message instructions other than TEX take their
/// results from `inputs` (in order of definition).
struct Eval {
    values: HashMap<Value, u32>,
    /// Staging vectors read by texture instructions and BLEND, in order.
    messages: Vec<Vec<u32>>,
    /// Push words.
    fau: HashMap<u8, u32>,
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn clamp(x: f32, c: Option<Clamp>) -> f32 {
    let (lo, hi) = match c {
        Some(Clamp::Clamp0_1) => (0.0, 1.0),
        Some(Clamp::ClampM1_1) => (-1.0, 1.0),
        Some(Clamp::Clamp0Inf) => (0.0, f32::INFINITY),
        _ => return x,
    };
    // As the emulator implements the modifier: NaN gives the lower bound.
    if x.is_nan() { lo } else { x.clamp(lo, hi) }
}

fn compare_f(c: Condition, a: f32, b: f32) -> bool {
    match c {
        Condition::Eq => a == b,
        Condition::Gt => a > b,
        Condition::Ge => a >= b,
        Condition::Ne => a != b,
        Condition::Lt => a < b,
        Condition::Le => a <= b,
        _ => panic!("condition {c:?}"),
    }
}

fn compare_u(c: Condition, a: u32, b: u32) -> bool {
    match c {
        Condition::Eq => a == b,
        Condition::Gt => a > b,
        Condition::Ge => a >= b,
        Condition::Ne => a != b,
        Condition::Lt => a < b,
        Condition::Le => a <= b,
        _ => panic!("condition {c:?}"),
    }
}

impl Eval {
    fn run(shader: &Shader, inputs: &[u32], fau: HashMap<u8, u32>) -> Eval {
        Eval::run_with(shader, inputs, fau, &[])
    }

    /// Runs the shader; the registers texture instructions write take the words of `results`
    /// in order (then 0).
    fn run_with(shader: &Shader, inputs: &[u32], fau: HashMap<u8, u32>, results: &[u32]) -> Eval {
        let mut results = results.iter().copied();
        let mut e = Eval { values: HashMap::new(), messages: Vec::new(), fau };
        let mut inputs = inputs.iter().copied();
        let ids: Vec<_> =
            (0..shader.blocks.len()).flat_map(|b| shader.block_insts(tgsi2va::ir::Block(b as u32))).collect();
        for id in ids {
            let inst = *shader.inst(id);
            match inst.kind {
                InstKind::Preload(_) | InstKind::Undef => {}
                InstKind::Copy => {
                    let v = e.operand(inst.srcs[0]);
                    e.values.insert(shader.get(inst.dests)[0], v);
                }
                InstKind::Machine => {
                    let op = inst.mach.opcode;
                    let name = op.info().name;
                    if name.starts_with("TEX_") || name.starts_with("BLEND") {
                        let k = (0..2).find(|&k| !inst.staging_is_write(k) && !inst.staging[k].is_empty()).unwrap();
                        let reads = shader.get(inst.staging[k]).iter().map(|v| e.values[v]).collect();
                        e.messages.push(reads);
                        for w in (0..2).filter(|&w| inst.staging_is_write(w)) {
                            for &v in shader.get(inst.staging[w]) {
                                e.values.insert(v, results.next().unwrap_or(0));
                            }
                        }
                        continue;
                    }
                    if !inst.staging[0].is_empty() && name.starts_with("LD_") {
                        for &v in shader.get(inst.staging[0]) {
                            e.values.insert(v, inputs.next().unwrap_or(0));
                        }
                        continue;
                    }
                    if inst.dests.is_empty() {
                        continue;
                    }
                    let s: Vec<Src> = inst.sources().to_vec();
                    let r = e.alu(op, &inst.mach.instr(), &s);
                    e.values.insert(shader.get(inst.dests)[0], r);
                }
                _ => {}
            }
        }
        e
    }

    fn operand(&self, s: Src) -> u32 {
        match s.operand {
            Operand::Value(v) => self.values[&v],
            Operand::Const(c) => c,
            Operand::Uniform(w) => self.fau[&w],
            Operand::Special(_) => 0, // lane 0
            other => panic!("operand {other:?}"),
        }
    }

    fn float(&self, s: Src) -> f32 {
        let mut x = f(self.operand(s));
        if s.abs {
            x = x.abs();
        }
        if s.neg {
            x = -x;
        }
        x
    }

    fn alu(&self, op: Opcode, mach: &tgsi2va::valhall::Instr, s: &[Src]) -> u32 {
        let u = |i: usize| self.operand(s[i]);
        let x = |i: usize| self.float(s[i]);
        let cond = || mach.condition().unwrap();
        match op {
            Opcode::FADD_F32 => clamp(x(0) + x(1), mach.clamp()).to_bits(),
            Opcode::FMA_F32 => clamp(x(0).mul_add(x(1), x(2)), mach.clamp()).to_bits(),
            Opcode::FMAX_F32 => clamp(x(0).max(x(1)), mach.clamp()).to_bits(),
            Opcode::FRCP_F32 => (1.0 / x(0)).to_bits(),
            Opcode::CSEL_F32 => {
                if compare_f(cond(), f(u(0)), f(u(1))) {
                    u(2)
                } else {
                    u(3)
                }
            }
            Opcode::CSEL_U32 => {
                if compare_u(cond(), u(0), u(1)) {
                    u(2)
                } else {
                    u(3)
                }
            }
            Opcode::MUX_I32 => (u(0) & u(2)) | (u(1) & !u(2)),
            // The cube instructions as docs/emulator.md specifies them: the largest magnitude
            // (a NaN is ignored), the first axis reaching it with its sign (−0 positive) as the
            // face in bits 29..31, and each face's coordinate from two candidate axes.
            Opcode::CUBEFACE1 => x(0).abs().max(x(1).abs()).max(x(2).abs()).to_bits(),
            Opcode::CUBEFACE2_V9 => {
                let (a, b, c) = (x(0), x(1), x(2));
                let ma = a.abs().max(b.abs()).max(c.abs());
                let (axis, v) = if a.abs() == ma {
                    (0, a)
                } else if b.abs() == ma {
                    (1, b)
                } else {
                    (2, c)
                };
                // Negative unless v ≥ 0 (so a NaN counts as negative).
                let negative = u32::from(v.partial_cmp(&0.0).is_none_or(|o| o.is_lt()));
                (2 * axis + negative) << 29
            }
            Opcode::CUBE_SSEL | Opcode::CUBE_TSEL => {
                let flip = |v: u32| v ^ 0x8000_0000;
                match (op == Opcode::CUBE_SSEL, u(2) >> 29) {
                    (true, 0) => flip(u(0)),
                    (true, 1) => u(0),
                    (true, 2..=4) => u(1),
                    (true, 5) => flip(u(1)),
                    (false, 0 | 1 | 4 | 5) => flip(u(0)),
                    (false, 2) => u(1),
                    (false, 3) => flip(u(1)),
                    (_, face) => panic!("face {face}"),
                }
            }
            Opcode::S16_TO_F32 => (u(0) as u16 as i16 as f32).to_bits(),
            Opcode::FROUND_F32 => {
                assert_eq!(mach.round_mode(), Some(RoundMode::Rtn));
                x(0).floor().to_bits()
            }
            Opcode::F32_TO_S32 => {
                assert_eq!(mach.round_mode(), Some(RoundMode::Rtz));
                let v = x(0);
                if v.is_nan() { 0 } else { v as i32 as u32 }
            }
            // (a << shift) op b with the shift amount in byte 0.
            Opcode::LSHIFT_AND_I32 => (u(0) << (u(1) & 31)) & u(2),
            Opcode::LSHIFT_OR_I32 => (u(0) << (u(1) & 31)) | u(2),
            Opcode::RSHIFT_OR_I32 => (u(0) >> (u(1) & 31)) | u(2),
            _ => panic!("the evaluator does not know {}", op.info().name),
        }
    }
}

fn fs_shader(body: &str, decls: &str) -> Shader {
    lowered(&format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n{decls}DCL TEMP[0]\n  0: {body}\n  1: END\n"
    ))
    .shader
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// Float draws from the shared generator.
trait FloatDraws {
    /// Floats that exercise ties, zeros, signs and extremes.
    fn float(&mut self) -> f32;
}

impl FloatDraws for Rng {
    fn float(&mut self) -> f32 {
        const SPECIAL: [f32; 12] =
            [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, f32::INFINITY, f32::NEG_INFINITY, 1e-30, -7.5e20, f32::NAN];
        match self.next() % 4 {
            0 => SPECIAL[(self.next() % 12) as usize],
            1 => ((self.next() % 9) as f32 - 4.0) * 0.5,
            _ => f32::from_bits(self.next_u32() & 0x7FFF_FFFF) * if self.next() & 1 == 0 { 1.0 } else { -1.0 },
        }
    }
}

#[test]
fn cube_sequence_matches_cube_project() {
    let shader = fs_shader("TEX TEMP[0], IN[0], SAMP[0], CUBE", "DCL SAMP[0]\n");
    let mut rng = Rng::new(0x1234_5678_9ABC_DEF1);
    let mut directions: Vec<[f32; 3]> = vec![
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 2.0, 0.0],
        [0.0, -2.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        [1.0, 1.0, 0.0],
        [-1.0, 1.0, 1.0],
        [0.5, -0.5, 0.5],
        [-0.0, 0.0, -0.0],
        [0.0, -0.0, 3.0],
        [-0.0, -4.0, 0.0],
        [f32::INFINITY, 1.0, 0.0],
    ];
    for _ in 0..20000 {
        directions.push([rng.float(), rng.float(), rng.float()]);
    }
    let mut exact = 0;
    for d in directions {
        let e = Eval::run(&shader, &[d[0].to_bits(), d[1].to_bits(), d[2].to_bits(), 0], HashMap::new());
        let staging = &e.messages[0];
        assert_eq!(staging.len(), 2, "cube staging is S|face, T");
        let face = staging[0] >> 29;
        let s = f(staging[0] & 0x1FFF_FFFF | 0x2000_0000);
        let t = f(staging[1]);
        let (model_face, model_s, model_t) = cube_project(d[0], d[1], d[2]);
        assert_eq!(face, model_face, "face of {d:?}");
        {
            // Zero and NaN directions included: the model sends NaN to 0 like the clamp.
            exact += 1;
            assert_eq!(t.to_bits(), model_t.to_bits(), "t of {d:?}");
            if model_s == 0.0 {
                // The packed form keeps 29 bits: s = 0 reads back as 2^-63, the same texel.
                assert_eq!(s, 2f32.powi(-63), "s of {d:?}");
            } else {
                assert_eq!(s.to_bits(), model_s.to_bits(), "s of {d:?}");
            }
        }
    }
    assert!(exact > 15000, "{exact} exact");
}

#[test]
fn lod_conversion_matches_lod_to_fixed88() {
    let shader = fs_shader("TXL TEMP[0], IN[0], SAMP[0], 2D", "DCL SAMP[0]\n");
    let mut rng = Rng::new(0x0BAD_CAFE_F00D_1234);
    let mut lods: Vec<f32> = vec![
        0.0,
        -0.0,
        0.49,
        0.5,
        1.0 / 256.0,
        -1.0 / 256.0,
        15.999,
        16.0,
        17.0,
        -16.0,
        -100.0,
        f32::NAN,
        f32::INFINITY,
        1e-40,
    ];
    for _ in 0..20000 {
        lods.push(rng.float());
        lods.push((rng.next() % 8000) as f32 / 256.0 - 16.0);
    }
    for lod in lods {
        let e = Eval::run(&shader, &[0, 0, 0, lod.to_bits()], HashMap::new());
        let word = e.messages[0][2];
        assert_eq!(word >> 16, 0, "high half of the LOD word for {lod}");
        assert_eq!(word as u16 as i16 as i32, lod_to_fixed88(lod), "LOD {lod}");
    }
}

#[test]
fn constant_lods_fold_to_the_same_words() {
    for lod in [2.5f32, -1.5, 100.0, -0.003, 0.004, 7.99] {
        let shader = fs_shader(
            "TXL TEMP[0], IMM[0], SAMP[0], 2D",
            &format!("DCL SAMP[0]\nIMM[0] FLT32 {{ 0.5000, 0.5000, 0.0000, {lod:.4} }}\n"),
        );
        let e = Eval::run(&shader, &[], HashMap::new());
        let expected = lod_to_fixed88(lod);
        if expected == 0 {
            assert_eq!(e.messages[0].len(), 2, "LOD {lod} folds to mode zero");
        } else {
            assert_eq!(e.messages[0][2] as u16 as i16 as i32, expected, "LOD {lod}");
        }
    }
}

#[test]
fn projection_uses_one_reciprocal() {
    let shader = fs_shader("TXP TEMP[0], IN[0], SAMP[0], SHADOW2D", "DCL SAMP[0]\n");
    let mut rng = Rng::new(77);
    for _ in 0..2000 {
        let v: [f32; 4] = [rng.float(), rng.float(), rng.float(), rng.float()];
        let e = Eval::run(&shader, &v.map(f32::to_bits), HashMap::new());
        let r = 1.0 / v[3];
        // s, t, and the reference (src0.z), each times rcp(q).
        let expected = [v[0] * r, v[1] * r, v[2] * r].map(f32::to_bits);
        assert_eq!(e.messages[0], expected.to_vec(), "{v:?}");
    }
}

#[test]
fn fetch_words_pack_offsets_sample_and_level() {
    // Dynamic level with constant offsets: byte 3 = min(level, 255) unsigned.
    let shader = fs_shader("TXF TEMP[0], IN[0], SAMP[0], 2D, IMM[0].xyz", "DCL SAMP[0]\nIMM[0] INT32 {-1, 2, 7, 0}\n");
    for level in [0u32, 1, 14, 255, 256, 0xFFFF_FFFF, 0x8000_0000] {
        let e = Eval::run(&shader, &[5, 6, 0, level], HashMap::new());
        let word = e.messages[0][2];
        assert_eq!(word & 0xFF_FFFF, 0x00_02FF, "offsets x = -1, y = 2, no z for 2D");
        assert_eq!(word >> 24, level.min(255), "level {level}");
    }
    // Dynamic offsets: each masked to its byte.
    let shader = fs_shader("TXF_LZ TEMP[0], IN[0], SAMP[0], 3D, IN[1].xyz", "DCL SAMP[0]\n");
    for (x, y, z) in [(-8i32, 7i32, -1i32), (0, 0, 0), (3, -3, 300)] {
        let e = Eval::run(&shader, &[1, 2, 3, 0, x as u32, y as u32, z as u32, 0], HashMap::new());
        let word = e.messages[0][3];
        let expected = (x as u32 & 0xFF) | ((y as u32 & 0xFF) << 8) | ((z as u32 & 0xFF) << 16);
        assert_eq!(word, expected, "{x} {y} {z}");
    }
    // Multisample: the sample index in byte 2, min(sample, 255) unsigned (no sample has index
    // 255, so large and negative indices stay out of range instead of wrapping to a sample).
    let shader = fs_shader("TXF TEMP[0], IN[0], SAMP[0], 2D_MSAA", "DCL SAMP[0]\n");
    for (sample, byte) in [(3u32, 3u32), (0, 0), (15, 15), (0x1_0003, 255), (0xFFFF_FFFF, 255)] {
        let e = Eval::run(&shader, &[1, 2, 0, sample], HashMap::new());
        assert_eq!(e.messages[0], vec![1, 2, byte << 16], "sample {sample:#x}");
    }
}

#[test]
fn size_queries_match_query_size() {
    let cases: [(&str, Texture); 6] = [
        ("1D", Texture { width: 37, levels: 3, ..Texture::default_for(Dim::D1, false, TexelKind::Float, 0) }),
        ("2D", Texture { width: 300, height: 5, ..Texture::default_for(Dim::D2, false, TexelKind::Float, 0) }),
        (
            "3D",
            Texture { width: 16, height: 8, depth: 64, ..Texture::default_for(Dim::D3, false, TexelKind::Float, 0) },
        ),
        ("1D_ARRAY", Texture { layers: 9, ..Texture::default_for(Dim::D1, true, TexelKind::Float, 0) }),
        ("CUBEARRAY", Texture { layers: 3, ..Texture::default_for(Dim::Cube, true, TexelKind::Float, 0) }),
        ("BUFFER", Texture { width: 1000, ..Texture::default_for(Dim::Buffer, false, TexelKind::Float, 0) }),
    ];
    for (target, texture) in cases {
        let l = lowered(&format!(
            "FRAG\nDCL IN[0], GENERIC[0], CONSTANT\nDCL OUT[0], COLOR\nDCL SAMP[0]\n  0: TXQ OUT[0], IN[0], SAMP[0], {target}\n  1: END\n"
        ));
        // The sysval as docs/metadata.md describes it: the level-0 size query (layers in y for
        // 1D arrays, in z for 2D and cube arrays), as the emulator supplies it.
        let sysval = texture.query_size(0);
        let fau: HashMap<u8, u32> = l
            .meta
            .fau
            .iter()
            .filter_map(|word| match &word.source {
                tgsi2va::emit::meta::FauSource::Sysval { name, component } if name == "texture_size.0" => {
                    Some((word.word as u8, sysval[*component as usize]))
                }
                _ => None,
            })
            .collect();
        for level in [0u32, 1, 2, 5, 13, 31, 32, 40, 0xFFFF_FFFF] {
            let e = Eval::run(&l.shader, &[level, 0, 0, 0], fau.clone());
            // The colour output (BLEND's staging vector) is the query.
            let blend = e.messages.last().unwrap();
            assert_eq!(blend.as_slice(), texture.query_size(level).as_slice(), "{target} level {level}");
        }
    }
}

// ---- The sample corpus ------------------------------------------------------------------------

/// Every texture or derivative instruction of `tgsi-samples/` lowers, except the opcodes this
/// family rejects on purpose (whatever other families still reject is ignored here).
#[test]
fn sample_corpus_texture_instructions() {
    const FAMILY: [&str; 33] = [
        "TEX",
        "TXP",
        "TXB",
        "TXL",
        "TXD",
        "TXF",
        "TEX_LZ",
        "TXF_LZ",
        "TEX2",
        "TXB2",
        "TXL2",
        "TG4",
        "TXQ",
        "TXQ_LZ",
        "TXQS",
        "LODQ",
        "LOD",
        "SAMPLE",
        "SAMPLE_B",
        "SAMPLE_C",
        "SAMPLE_C_LZ",
        "SAMPLE_D",
        "SAMPLE_L",
        "SAMPLE_I",
        "SAMPLE_I_MS",
        "GATHER4",
        "SVIEWINFO",
        "SAMPLE_POS",
        "SAMPLE_INFO",
        "DDX",
        "DDY",
        "DDX_FINE",
        "DDY_FINE",
    ];
    const LEGACY: [&str; 7] = ["TEXLD", "TEXLDB", "TEXLDD", "DSX", "DSY", "LOAD_MS", "RESINFO"];
    const REJECTED: [&str; 9] =
        ["TXD", "TEXLDD", "SAMPLE_D", "LODQ", "LOD", "TXQS", "SAMPLE_POS", "SAMPLE_INFO", "LOAD_MS"];
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "tgsi") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut texture_insts, mut rejected, mut unexpected) = (0, 0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let program = tgsi2va::tgsi::parse(&text).unwrap();
        texture_insts += program.instructions().filter(|i| FAMILY.contains(&i.opcode.canonical().name())).count();
        let Err(d) = lower(&program, &Options::default()) else { continue };
        for diag in &d.0 {
            let first = diag.message.split_whitespace().next().unwrap_or("");
            let ours = FAMILY.contains(&first) || LEGACY.contains(&first) || diag.message.starts_with("texel offsets");
            if ours && REJECTED.contains(&first) && diag.message.ends_with("cannot be compiled for Valhall") {
                rejected += 1;
                eprintln!("rejected: {}: {}", f.display(), diag.message);
            } else if ours {
                unexpected.push(format!("{}: {}", f.display(), diag.message));
            }
        }
    }
    eprintln!(
        "{texture_insts} texture/derivative instructions in {} samples, {rejected} rejected on purpose",
        files.len()
    );
    assert!(texture_insts > 100, "{texture_insts}");
    assert!(unexpected.is_empty(), "{unexpected:#?}");
}

// ---- Explicit derivatives and LOD queries --------------------------------------------------

#[test]
fn txd_stages_the_derivative_vector_then_the_descriptor() {
    // 2D: TEX_GRADIENT reads ddx.s, ddy.s, ddx.t, ddy.t; TEX_SINGLE.grdesc reads s, t, the
    // offset word and the two descriptor words TEX_GRADIENT returned.
    let shader = fs_shader(
        "TXD TEMP[0], IN[0], IN[1].xyyy, IN[1].zwww, SAMP[0], 2D, IMM[0].xyz",
        "DCL SAMP[0]\nIMM[0] INT32 {1, -1, 0, 0}\n",
    );
    let inputs = [1.5f32, 2.5, 0.0, 0.0, 0.25, -0.5, 0.125, 8.0].map(f32::to_bits);
    let e = Eval::run_with(&shader, &inputs, HashMap::new(), &[0x0180, 0xDEAD_0000]);
    assert_eq!(e.messages.len(), 2);
    assert_eq!(e.messages[0], [0.25f32, 0.125, -0.5, 8.0].map(f32::to_bits).to_vec());
    assert_eq!(e.messages[1], vec![1.5f32.to_bits(), 2.5f32.to_bits(), 0x0000_FF01, 0x0180, 0xDEAD_0000]);
    // 3D has six derivative words, 1D two.
    let shader = fs_shader("TXD TEMP[0], IN[0], IN[1], IN[0].wzyx, SAMP[0], 3D", "DCL SAMP[0]\n");
    let inputs: Vec<u32> = (1..=8).map(|i| (i as f32).to_bits()).collect();
    let e = Eval::run_with(&shader, &inputs, HashMap::new(), &[7, 9]);
    assert_eq!(e.messages[0], [5.0f32, 4.0, 6.0, 3.0, 7.0, 2.0].map(f32::to_bits).to_vec());
    assert_eq!(e.messages[1], vec![1.0f32.to_bits(), 2.0f32.to_bits(), 3.0f32.to_bits(), 7, 9]);
    let shader = fs_shader("TXD TEMP[0], IN[0], IN[1].xxxx, IN[1].yyyy, SAMP[0], 1D", "DCL SAMP[0]\n");
    let e = Eval::run_with(&shader, &inputs, HashMap::new(), &[3, 4]);
    assert_eq!(e.messages[0], [5.0f32, 6.0].map(f32::to_bits).to_vec());
}

#[test]
fn lod_queries_convert_the_fixed_point_words() {
    // TEX_GRADIENT results: clamped first (x), unclamped second (y); low 16 bits signed 8.8,
    // the high half ignored. BLEND's staging shows the colour.
    let shader = lowered(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n  0: LODQ OUT[0].xy, IN[0], SAMP[0], 2D\n  1: END\n",
    )
    .shader;
    let model = Texture::default_for(Dim::D2, false, TexelKind::Float, 0);
    let cases = [(0i32, -4096i32), (0x80, 0x80), (0x17F, 0x17F), (0x180, 0x180), (0x400, 0x1000), (0x27F, -0x27F)];
    for (clamped, unclamped) in cases {
        let words = [clamped as u32 & 0xFFFF | 0xABCD_0000, unclamped as u32 & 0xFFFF | 0x1234_0000];
        let e = Eval::run_with(&shader, &[0.5f32.to_bits(); 2], HashMap::new(), &words);
        assert_eq!(e.messages.len(), 3, "two TEX_GRADIENT and BLEND");
        assert_eq!(e.messages[0], vec![0.5f32.to_bits(); 2], "the coordinates, no layer");
        let colour = e.messages.last().unwrap();
        assert_eq!(f(colour[0]), model.select_level(clamped) as f32, "x for {clamped:#x}");
        assert_eq!(f(colour[1]), unclamped as f32 / 256.0, "y for {unclamped:#x}");
    }
}
