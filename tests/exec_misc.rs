//! Both executors (the TGSI interpreter, and the compiler + Valhall emulator) on the opcodes of
//! the subgroup, fragment-model and 64-bit-division families, against values computed by hand
//! (or by a reference in Rust for the division): subgroup votes, ballots and reads over a quad
//! with divergent lanes; FBFETCH with given and procedural framebuffer colours; INTERP_* with
//! the affine-quad varying model; READ_HELPER with an uncovered lane; 64-bit division on tens
//! of thousands of operand pairs; legacy source modifiers; NOP and unassigned opcodes.

#![allow(clippy::needless_range_loop)] // lanes are indexed in parallel arrays

use tgsi2va::exec::LANES;
use tgsi2va::exec::io::{Inputs, Outputs, RegKey};

struct Both {
    interp: Outputs,
    emu: Outputs,
}

fn run(text: &str, inputs: &Inputs) -> Both {
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|d| panic!("parse: {:?}", d.0));
    let interp = tgsi2va::interp::run(&program, inputs).unwrap_or_else(|e| panic!("interp: {e}\n{text}")).outputs;
    let options = tgsi2va::compile::Options { contract: false, ..Default::default() };
    let compiled = tgsi2va::compile::compile(text, &options).unwrap_or_else(|d| panic!("compile: {:?}", d.0));
    let emu = tgsi2va::emu::run(&compiled.blob, &compiled.meta, inputs).unwrap_or_else(|e| panic!("emu: {e}\n{text}"));
    Both { interp, emu }
}

fn reg(name: &str) -> RegKey {
    RegKey::parse(name).unwrap()
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

impl Both {
    /// Checks `register` in every lane not listed in `skip` on both sides.
    fn expect(&self, register: &str, expected: [[u32; 4]; LANES], skip: &[usize]) {
        for (who, out) in [("interpreter", &self.interp), ("emulator", &self.emu)] {
            let got = out.outputs[&reg(register)];
            for lane in (0..LANES).filter(|l| !skip.contains(l)) {
                assert_eq!(got[lane], expected[lane], "{who}: {register} lane {lane}");
            }
        }
    }

    fn buffer(&self, index: u32) -> Vec<u32> {
        assert_eq!(self.interp.buffers[&index], self.emu.buffers[&index], "BUFFER[{index}]");
        self.emu.buffers[&index].clone()
    }
}

fn sample(path: &str) -> String {
    std::fs::read_to_string(format!("{}/tgsi-samples/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

// ---- Subgroups --------------------------------------------------------------------------------

/// `cs/subgroup-vote.tgsi` with lanes 0 and 2 voting true (x = 1.0, 2.0 > 0.5) and 1, 3 false:
/// any = ~0, all = 0, ballot 0b0101, prefix counts 0, 1, 1, 2; READ_INVOC of the next lane;
/// in the branch (lanes 0, 2) READ_FIRST is lane 0 and the votes see only lanes 0 and 2.
#[test]
fn subgroup_votes_ballots_and_reads() {
    let inputs = Inputs::from_json(
        r#"{"buffers": {"0": [1.0,0,0.75,0,0,0,0,0, 0,0,0,0,0,0,0,0, 2.0,0,0.75,0,0,0,0,0, 0.25,3.0,0,0,0,0,0,0],
                        "1": [0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0]},
            "SV[0]": [["0x0",0,0,0],["0x1",0,0,0],["0x2",0,0,0],["0x3",0,0,0]],
            "SV[1]": ["0x4",0,0,0],
            "SV[2]": [["0x0",0,0,0],["0x1",0,0,0],["0x2",0,0,0],["0x3",0,0,0]],
            "SV[3]": [["0x0",0,0,0],["0x1",0,0,0],["0x3",0,0,0],["0x7",0,0,0]]}"#,
    )
    .unwrap();
    let b = run(&sample("cs/subgroup-vote.tgsi"), &inputs).buffer(1);
    let ones = u32::MAX;
    // Record of lane l: [any, all, prefix, branch vote] then [READ_INVOC(next).xy + READ_FIRST.xy,
    // VOTE_EQ.zw]; TEMP[1] of lane l is (x, y, z, 0) with x = 1, 0, 2, 0.25.
    let expected: [[u32; 8]; 4] = [
        // Lane 0: next = lane 1 (0, 0); first in branch = lane 0: (z, w) = (0.75, 0); .w equal.
        [ones, 0, 0, ones, f(0.0 + 0.75), f(0.0), ones, ones],
        [ones, 0, 1, 0, f(2.0), f(0.0), 0, 0],
        // Lane 2: next = lane 3 (0.25, 3.0), + READ_FIRST (0.75, 0).
        [ones, 0, 1, ones, f(0.25 + 0.75), f(3.0), ones, ones],
        [ones, 0, 2, 0, f(1.0), f(0.0), 0, 0],
    ];
    for (lane, e) in expected.iter().enumerate() {
        assert_eq!(&b[8 * lane..8 * lane + 8], e, "lane {lane}");
    }
}

/// VOTE_EQ compares bit patterns component-wise over the active lanes; BALLOT writes its mask
/// to the pairs xy and zw; READ_INVOC of an active lane in a vertex shader.
#[test]
fn subgroup_ops_in_a_vertex_shader() {
    let text = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\nDCL TEMP[0..1]\nIMM[0] UINT32 {3, 0, 0, 0}\n\
                  0: VOTE_EQ TEMP[0], IN[0]\n  1: BALLOT TEMP[1], IN[0].wwww\n  2: MOV OUT[0], IN[0]\n\
                  3: UADD OUT[1].xy, TEMP[1].xyyy, TEMP[0].xyyy\n  4: READ_INVOC OUT[1].zw, IN[0], IMM[0].xxxx\n  5: END\n";
    // x equal everywhere; y: +0 vs −0 differ bitwise; z, w differ.
    let inputs = Inputs::from_json(
        r#"{"IN[0]": [[1.0, 0.0, 1.0, "0x1"], [1.0, "0x80000000", 2.0, 0], [1.0, 0.0, 3.0, "0x1"], [1.0, 0.0, 4.0, 0]]}"#,
    )
    .unwrap();
    let both = run(text, &inputs);
    // x: ballot of w (lanes 0, 2: 0b0101) + VOTE_EQ.x (~0) = 4; y: ballot's high word 0 +
    // VOTE_EQ.y (0: +0 and −0 differ); zw: lane 3's IN[0].zw.
    both.expect("OUT[1]", [[4, 0, f(4.0), 0]; 4], &[]);
}

// ---- Fragment models --------------------------------------------------------------------------

/// FBFETCH reads the `OUT[i]` inputs when given, else the procedural framebuffer; the source
/// swizzle and negation apply.
#[test]
fn fbfetch_reads_the_framebuffer_model() {
    let text = "FRAG\nDCL OUT[0], COLOR\nDCL OUT[1], COLOR[3]\nDCL TEMP[0..1]\n\
                  0: FBFETCH TEMP[0], OUT[0].wzyx\n  1: FBFETCH TEMP[1], -OUT[1]\n\
                  2: MOV OUT[0], TEMP[0]\n  3: MOV OUT[1], TEMP[1]\n  4: END\n";
    let inputs =
        Inputs::from_json(r#"{"OUT[0]": [[0.5, 0.25, 0.125, 1.0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]}"#)
            .unwrap();
    let both = run(text, &inputs);
    both.expect(
        "OUT[0]",
        [
            [f(1.0), f(0.125), f(0.25), f(0.5)],
            [f(4.0), f(3.0), f(2.0), f(1.0)],
            [f(8.0), f(7.0), f(6.0), f(5.0)],
            [f(12.0), f(11.0), f(10.0), f(9.0)],
        ],
        &[],
    );
    let fb = |l: usize| tgsi2va::exec::framebuffer::colour(&inputs, reg("OUT[1]"), 3, l).map(|w| w ^ 0x8000_0000);
    both.expect("OUT[1]", std::array::from_fn(fb), &[]);
    // The procedural colours are not all zero (the model is exercised).
    assert!((0..LANES).any(|l| fb(l)[0] != 0x8000_0000));
}

/// INTERP_* (docs/interpreter.md): centroid and samples are the centre; an offset moves along
/// the quad's plane `v1 − v0`, `v2 − v0` after quantisation to 1/256 pixel; flat inputs do not
/// move; source modifiers apply after interpolation.
#[test]
fn interpolation_at_centroid_sample_and_offsets() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], CONSTANT\nDCL OUT[0], COLOR\n\
                DCL OUT[1], COLOR[1]\nDCL OUT[2], COLOR[2]\nDCL TEMP[0]\n\
                IMM[0] FLT32 {    0.2500,    -0.1250,     0.0010,     0.0000}\nIMM[1] UINT32 {3, 0, 0, 0}\n\
                  0: INTERP_CENTROID TEMP[0].x, IN[0].xxxx\n  1: INTERP_SAMPLE TEMP[0].y, IN[0].yyyy, IMM[1].xxxx\n\
                  2: INTERP_OFFSET TEMP[0].zw, -IN[0].xxxy, IMM[0].xyyy\n  3: MOV OUT[0], TEMP[0]\n\
                  4: INTERP_OFFSET OUT[1], IN[1], IMM[0].xxxx\n  5: INTERP_OFFSET OUT[2], IN[0], IMM[0].zzzz\n  6: END\n";
    // x: 1 + 2·px + 4·py; y: 8 − py (lane bit 0 = px, bit 1 = py).
    let inputs = Inputs::from_json(
        r#"{"IN[0]": [[1, 8, 0, 0], [3, 8, 0, 0], [5, 7, 0, 0], [7, 7, 0, 0]],
            "IN[1]": [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]}"#,
    )
    .unwrap();
    let both = run(text, &inputs);
    let x = [1.0f32, 3.0, 5.0, 7.0];
    let y = [8.0f32, 8.0, 7.0, 7.0];
    // Offset (0.25, −0.125): x moves by 0.25·2 − 0.125·4 = 0, y by −0.125·(−1) = +0.125.
    both.expect("OUT[0]", std::array::from_fn(|l| [f(x[l]), f(y[l]), f(-x[l]), f(-(y[l] + 0.125))]), &[]);
    both.expect("OUT[1]", [[f(1.0), f(2.0), f(3.0), f(4.0)]; 4], &[]);
    // Offset 0.001 quantises to 0/256 (rte(128.256) = 128): no movement at all.
    both.expect("OUT[2]", std::array::from_fn(|l| [f(x[l]), f(y[l]), 0, 0]), &[]);
}

/// READ_HELPER: ~0 in a lane without a covered sample (SAMPLEMASK 0), 0 elsewhere; DEMOTE
/// discards the lane (the demoted lane is killed on both sides).
#[test]
fn read_helper_and_demote() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL SV[0], SAMPLEMASK\nDCL SV[1], HELPER_INVOCATION\n\
                DCL OUT[0], COLOR\nDCL TEMP[0]\nIMM[0] FLT32 {    0.0000,     0.0000,     0.0000,     0.0000}\n\
                  0: FSLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx\n  1: UIF TEMP[0].xxxx\n  2:   DEMOTE\n  3: ENDIF\n\
                  4: READ_HELPER TEMP[0].y\n  5: MOV TEMP[0].z, SV[1].xxxx\n  6: MOV TEMP[0].w, SV[0].xxxx\n\
                  7: MOV OUT[0], TEMP[0]\n  8: END\n";
    let inputs = Inputs::from_json(
        r#"{"IN[0]": [[1, 0, 0, 0], [-1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
            "SV[0]": [["0x1",0,0,0], ["0x1",0,0,0], ["0x0",0,0,0], ["0x1",0,0,0]],
            "SV[1]": [["0x0",0,0,0], ["0x0",0,0,0], ["0xffffffff",0,0,0], ["0x0",0,0,0]]}"#,
    )
    .unwrap();
    let both = run(text, &inputs);
    assert_eq!(both.interp.killed, vec![1]);
    assert_eq!(both.emu.killed, vec![1]);
    let m1 = u32::MAX;
    both.expect("OUT[0]", [[0, 0, 0, 1], [0; 4], [0, m1, m1, 0], [0, 0, 0, 1]], &[1]);
}

// ---- 64-bit division --------------------------------------------------------------------------

fn rng(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// A value with a random number of significant bits.
fn any_width(state: &mut u64) -> u64 {
    let bits = rng(state) % 65;
    let v = rng(state);
    if bits == 64 { v } else { v & ((1u64 << bits) - 1) }
}

/// U64DIV, U64MOD, I64DIV, I64MOD against Rust's u64/i64 arithmetic (with the division-by-zero
/// rules of docs/lowering.md) on edge values and random pairs of every width, four pairs per
/// quad; the emulator on all of them, the interpreter on the same runs.
#[test]
fn int64_division_matches_a_reference() {
    let text = "COMP\nDCL SV[0], THREAD_ID\nDCL BUFFER[0]\nDCL BUFFER[1]\nDCL TEMP[0..3]\n\
                IMM[0] UINT32 {16, 32, 0, 0}\n\
                  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx\n  1: LOAD TEMP[1], BUFFER[0], TEMP[0].xxxx\n\
                  2: U64DIV TEMP[2].xy, TEMP[1].xyxy, TEMP[1].zwzw\n  3: U64MOD TEMP[2].zw, TEMP[1].xyxy, TEMP[1].zwzw\n\
                  4: I64DIV TEMP[3].xy, TEMP[1].xyxy, TEMP[1].zwzw\n  5: I64MOD TEMP[3].zw, TEMP[1].xyxy, TEMP[1].zwzw\n\
                  6: UMUL TEMP[0].y, SV[0].xxxx, IMM[0].yyyy\n  7: STORE BUFFER[1], TEMP[0].yyyy, TEMP[2]\n\
                  8: UADD TEMP[0].z, TEMP[0].yyyy, IMM[0].xxxx\n  9: STORE BUFFER[1], TEMP[0].zzzz, TEMP[3]\n 10: END\n";
    let program = tgsi2va::tgsi::parse(text).unwrap();
    let options = tgsi2va::compile::Options { contract: false, ..Default::default() };
    let compiled = tgsi2va::compile::compile(text, &options).unwrap();
    let edges: Vec<u64> = vec![
        0,
        1,
        2,
        3,
        7,
        0xFFFF_FFFF,
        0x1_0000_0000,
        0x1_0000_0001,
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
        (1 << 63) - 1,
        (1 << 63) + 1,
        0xDEAD_BEEF_CAFE_F00D,
        0x8000_0000,
        (-7i64) as u64,
    ];
    let mut pairs: Vec<(u64, u64)> = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).collect();
    let mut state = 0x1234_5678_9ABC_DEF0u64;
    for _ in 0..1500 {
        pairs.push((any_width(&mut state), any_width(&mut state)));
    }
    let udiv = |n: u64, d: u64| n.checked_div(d).unwrap_or(u64::MAX);
    let umod = |n: u64, d: u64| n.checked_rem(d).unwrap_or(u64::MAX);
    let idiv = |n: u64, d: u64| {
        let (n, d) = (n as i64, d as i64);
        (if d == 0 { if n < 0 { 1 } else { -1 } } else { n.wrapping_div(d) }) as u64
    };
    let imod = |n: u64, d: u64| if d == 0 { u64::MAX } else { (n as i64).wrapping_rem(d as i64) as u64 };
    let split = |v: u64| [v as u32, (v >> 32) as u32];
    for (k, chunk) in pairs.chunks(LANES).enumerate() {
        let mut words = Vec::new();
        for &(n, d) in chunk {
            words.extend(split(n));
            words.extend(split(d));
        }
        let inputs = Inputs {
            buffers: [(0, words), (1, vec![0; 8 * LANES])].into_iter().collect(),
            registers: [(reg("SV[0]"), std::array::from_fn(|l| [l as u32, 0, 0, 0]))].into_iter().collect(),
            ..Inputs::default()
        };
        let emu = tgsi2va::emu::run(&compiled.blob, &compiled.meta, &inputs).unwrap();
        let out = &emu.buffers[&1];
        let interp = (k % 8 == 0).then(|| tgsi2va::interp::run(&program, &inputs).unwrap().outputs.buffers[&1].clone());
        for (l, &(n, d)) in chunk.iter().enumerate() {
            let expected = [udiv(n, d), umod(n, d), idiv(n, d), imod(n, d)];
            for (j, e) in expected.iter().enumerate() {
                let got = &out[8 * l + 2 * j..8 * l + 2 * j + 2];
                assert_eq!(got, split(*e), "{} of {n:#x}, {d:#x}", ["U64DIV", "U64MOD", "I64DIV", "I64MOD"][j]);
                if let Some(i) = &interp {
                    assert_eq!(&i[8 * l + 2 * j..8 * l + 2 * j + 2], split(*e), "interpreter, {n:#x}, {d:#x}");
                }
            }
        }
    }
}

// ---- Legacy operands, NOP ---------------------------------------------------------------------

/// The Mesa ≤ 7.7 source modifiers (extended swizzle with 0/1 and negation, `1-( )`, `( )-.5`,
/// `2*( )`, `|…|`, outer `-( )`) in float operands, and NEGATE/SWZ.
#[test]
fn legacy_source_modifiers() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL OUT[1], COLOR[1]\nDCL TEMP[0]\n\
                  0: SWZ TEMP[0], IN[0].x-y01\n  1: MOV OUT[0], TEMP[0]\n\
                  2: ADD OUT[1], -(|IN[0]|), 2*((1-(IN[0]))-.5)\n  3: END\n";
    let inputs = Inputs::from_json(r#"{"IN[0]": [0.25, -3.0, 2.0, 0.75]}"#).unwrap();
    let both = run(text, &inputs);
    both.expect("OUT[0]", [[f(0.25), f(3.0), f(0.0), f(1.0)]; 4], &[]);
    // −|v| + 2·((1 − v) − 0.5) = −|v| + 1 − 2v.
    let v = [0.25f32, -3.0, 2.0, 0.75];
    both.expect("OUT[1]", [std::array::from_fn(|c| f(-v[c].abs() + 2.0 * ((1.0 - v[c]) - 0.5))); 4], &[]);
}

/// NOP and the unassigned opcode numbers do nothing on both sides.
#[test]
fn nop_and_gap_opcodes_do_nothing() {
    let text =
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: NOP\n  1: UNK67\n  2: MOV OUT[0], IN[0]\n  3: NOP\n  4: END\n";
    let inputs = Inputs::from_json(r#"{"IN[0]": [1.0, 2.0, 3.0, 1.0]}"#).unwrap();
    let both = run(text, &inputs);
    assert_eq!(both.interp.outputs[&reg("OUT[0]")], [[f(1.0), f(2.0), f(3.0), f(1.0)]; 4]);
    // The emulator reports the screen-space position: w' = 1/w = 1, so the same values.
    assert_eq!(both.emu.outputs[&reg("OUT[0]")], [[f(1.0), f(2.0), f(3.0), f(1.0)]; 4]);
}
