//! Control flow with per-lane masks, kill/demote, derivatives across the quad, textures
//! against the model, memory, indirect addressing, 64-bit pairs and the errors.

use tgsi2va::exec::io::{Inputs, RegKey};
use tgsi2va::exec::texture::{Dim, SampleCoords, TexelKind, Texture, lod_to_fixed88};
use tgsi2va::interp::{self, Accuracy, InterpError, Options, Run};
use tgsi2va::tgsi::ast::File;

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn program(stage: &str, decls: &str, body: &str) -> String {
    let mut text = format!("{stage}\n{decls}\n");
    let mut n = 0;
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("IMM") {
            text.push_str(line);
            text.push('\n');
        } else {
            text.push_str(&format!("{n:3}: {line}\n"));
            n += 1;
        }
    }
    if !body.contains("END\n") && !body.trim_end().ends_with("END") {
        text.push_str(&format!("{n:3}: END\n"));
    }
    text
}

fn try_run(stage: &str, decls: &str, body: &str, inputs: &str) -> Result<Run, InterpError> {
    let text = program(stage, decls, body);
    let program = tgsi2va::tgsi::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    interp::run(&program, &Inputs::from_json(inputs).unwrap())
}

fn run(stage: &str, decls: &str, body: &str, inputs: &str) -> Run {
    try_run(stage, decls, body, inputs).unwrap_or_else(|e| panic!("{e}"))
}

fn out(run: &Run, index: u32, lane: usize) -> [u32; 4] {
    run.outputs.outputs[&RegKey::new(File::Output, index)][lane]
}

fn lanes_x(run: &Run, index: u32) -> [f32; 4] {
    std::array::from_fn(|l| f32::from_bits(out(run, index, l)[0]))
}

const FS: &str = "DCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..3]\nIMM[0] FLT32 {    0.0000,     1.0000,     2.0000,     3.0000}";
const PER_LANE: &str = r#"{"IN[0]": [[1, 10, 0, 0], [-1, 20, 0, 0], [2, 30, 0, 0], [-2, 40, 0, 0]]}"#;

#[test]
fn if_else_diverges_per_lane() {
    let body = "MOV OUT[0], IMM[0].xxxx
        SLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
        IF TEMP[0].xxxx
          MOV OUT[0].x, IMM[0].zzzz
        ELSE
          MOV OUT[0].x, IMM[0].wwww
        ENDIF";
    let r = run("FRAG", FS, body, PER_LANE);
    assert_eq!(lanes_x(&r, 0), [3.0, 2.0, 3.0, 2.0]);
    // UIF tests bits: -0.0 is true for UIF, false for IF.
    let body = "MOV OUT[0], IMM[0].xxxx
        UIF IN[0].xxxx
          MOV OUT[0].x, IMM[0].yyyy
        ENDIF
        IF IN[0].xxxx
          MOV OUT[0].y, IMM[0].yyyy
        ENDIF";
    let r = run(
        "FRAG",
        FS,
        body,
        r#"{"IN[0]": [["0x80000000", 0, 0, 0], [0, 0, 0, 0], ["0x7fc00000", 0, 0, 0], [1, 0, 0, 0]]}"#,
    );
    let xy: Vec<[u32; 2]> = (0..4).map(|l| [out(&r, 0, l)[0], out(&r, 0, l)[1]]).collect();
    assert_eq!(xy, vec![[f(1.0), 0], [0, 0], [f(1.0), f(1.0)], [f(1.0), f(1.0)]]);
}

#[test]
fn loop_with_per_lane_break_and_continue() {
    // Count up to IN[0].y/10 iterations per lane, skipping the add on odd counters via CONT.
    let body = "MOV TEMP[0], IMM[0].xxxx
        MOV TEMP[1], IMM[0].xxxx
        BGNLOOP
          ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
          MUL TEMP[2].x, TEMP[0].xxxx, IMM[0].wwww
          MUL TEMP[2].x, TEMP[2].xxxx, IMM[0].wwww
          SGE TEMP[2].y, TEMP[2].xxxx, IN[0].yyyy
          IF TEMP[2].yyyy
            BRK
          ENDIF
          FRC TEMP[2].z, TEMP[0].xxxx
          ADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy
          CONT
          ADD TEMP[1].x, TEMP[1].xxxx, IMM[0].wwww
        ENDLOOP
        MOV OUT[0], TEMP[0]
        MOV OUT[0].y, TEMP[1].xxxx";
    let r = run("FRAG", FS, body, PER_LANE);
    // 9·i ≥ y: lane 0 (10) stops at i = 2, lane 1 (20) at 3, lane 2 (30) at 4, lane 3 (40) at 5.
    assert_eq!(lanes_x(&r, 0), [2.0, 3.0, 4.0, 5.0]);
    let y: Vec<f32> = (0..4).map(|l| f32::from_bits(out(&r, 0, l)[1])).collect();
    assert_eq!(y, vec![1.0, 2.0, 3.0, 4.0], "CONT skips the second add");
}

#[test]
fn switch_falls_through_and_default_in_the_middle() {
    let decls = "DCL IN[0], GENERIC[0], CONSTANT\nDCL OUT[0], COLOR\nDCL TEMP[0]\nIMM[0] UINT32 {0, 1, 2, 3}\nIMM[1] UINT32 {10, 100, 1000, 0}";
    let body = "MOV TEMP[0], IMM[0].xxxx
        SWITCH IN[0].xxxx
        CASE IMM[0].yyyy
          UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
        DEFAULT
          UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].xxxx
          BRK
        CASE IMM[0].zzzz
          UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].yyyy
        CASE IMM[0].wwww
          UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].zzzz
        ENDSWITCH
        MOV OUT[0], TEMP[0]";
    let inputs = r#"{"IN[0]": [["0x1", 0, 0, 0], ["0x2", 0, 0, 0], ["0x3", 0, 0, 0], ["0x7", 0, 0, 0]]}"#;
    let r = run("FRAG", decls, body, inputs);
    let x: Vec<u32> = (0..4).map(|l| out(&r, 0, l)[0]).collect();
    // 1: case 1, falls into DEFAULT (+10), BRK → 11. 2: +100 +1000. 3: +1000. 7: DEFAULT → 10.
    assert_eq!(x, vec![11, 1100, 1000, 10]);
}

#[test]
fn subroutines_and_ret_in_main() {
    let decls =
        "DCL IN[0]\nDCL OUT[0], POSITION\nDCL TEMP[0]\nIMM[0] FLT32 {    0.0000,     1.0000,     2.0000,     3.0000}";
    let body = "MOV TEMP[0], IMM[0].xxxx
        CAL :6
        CAL :6
        MOV OUT[0], TEMP[0]
        END
        NOP
        BGNSUB
          ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
          SLT TEMP[0].y, IN[0].xxxx, IMM[0].xxxx
          IF TEMP[0].yyyy
            RET
          ENDIF
          ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].zzzz
          RET
        ENDSUB";
    let r = run("VERT", decls, body, PER_LANE);
    assert_eq!(lanes_x(&r, 0), [6.0, 2.0, 6.0, 2.0]);
    // RET in main ends the lanes that execute it.
    let body = "MOV OUT[0], IMM[0].xxxx
        SLT TEMP[0].y, IN[0].xxxx, IMM[0].xxxx
        IF TEMP[0].yyyy
          RET
        ENDIF
        MOV OUT[0].x, IMM[0].wwww";
    let r = run("VERT", decls, body, PER_LANE);
    assert_eq!(lanes_x(&r, 0), [3.0, 0.0, 3.0, 0.0]);
}

#[test]
fn kill_if_per_lane_and_demote() {
    let body = "MOV OUT[0], IN[0]\nKILL_IF IN[0].xyyy\nMOV OUT[0], IMM[0].yyyy";
    let r = run("FRAG", FS, body, PER_LANE);
    assert_eq!(r.outputs.killed, vec![1, 3]);
    assert_eq!(lanes_x(&r, 0)[0], 1.0);
    // NaN is not < 0; -0 is not < 0.
    let r = run(
        "FRAG",
        FS,
        body,
        r#"{"IN[0]": [["0x7fc00000", 0, 0, 0], ["0x80000000", 0, 0, 0], [0, -1e-30, 0, 0], [0, 0, 0, 0]]}"#,
    );
    assert_eq!(r.outputs.killed, vec![2]);
    // DEMOTE: the lane keeps running (and counts for derivatives) but its outputs are
    // discarded; READ_HELPER sees it.
    let body = "SLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
        IF TEMP[0].xxxx
          DEMOTE
        ENDIF
        READ_HELPER TEMP[1].x
        MOV OUT[0], TEMP[1].xxxx
        DDX OUT[0].y, IN[0].yyyy";
    let r = run("FRAG", FS, body, PER_LANE);
    assert_eq!(r.outputs.killed, vec![1, 3]);
    assert_eq!(out(&r, 0, 1)[0], 0xffff_ffff);
    assert_eq!(out(&r, 0, 0)[0], 0);
    assert_eq!(f32::from_bits(out(&r, 0, 0)[1]), 10.0, "the demoted lane 1 still contributes");
}

#[test]
fn derivatives_coarse_fine_and_inactive_lanes() {
    let inputs = r#"{"IN[0]": [[1, 0, 0, 0], [2, 0, 0, 0], [4, 0, 0, 0], [8, 0, 0, 0]]}"#;
    let body = "DDX OUT[0].x, IN[0].xxxx\nDDY OUT[0].y, IN[0].xxxx\nDDX_FINE OUT[0].z, IN[0].xxxx\nDDY_FINE OUT[0].w, IN[0].xxxx";
    let r = run("FRAG", FS, body, inputs);
    let lane = |l: usize| out(&r, 0, l).map(f32::from_bits);
    // coarse: x = v1 − v0 = 1, y = v2 − v0 = 3 everywhere; fine x: rows (1, 4); fine y: columns (3, 6).
    assert_eq!(lane(0), [1.0, 3.0, 1.0, 3.0]);
    assert_eq!(lane(1), [1.0, 3.0, 1.0, 6.0]);
    assert_eq!(lane(2), [1.0, 3.0, 4.0, 3.0]);
    assert_eq!(lane(3), [1.0, 3.0, 4.0, 6.0]);
    // Inside a branch taken by lanes 0 and 3 only, lanes 1 and 2 contribute 0.
    let body = "MOV OUT[0], IMM[0].xxxx
        SNE TEMP[0].x, IN[0].yyyy, IMM[0].xxxx
        IF TEMP[0].xxxx
          DDX OUT[0].x, IN[0].xxxx
          DDY_FINE OUT[0].y, IN[0].xxxx
        ENDIF";
    let inputs = r#"{"IN[0]": [[1, 1, 0, 0], [2, 0, 0, 0], [4, 0, 0, 0], [8, 1, 0, 0]]}"#;
    let r = run("FRAG", FS, body, inputs);
    assert_eq!(out(&r, 0, 0).map(f32::from_bits)[..2], [-1.0, -1.0], "0 − v0; 0 − v0");
    assert_eq!(out(&r, 0, 3).map(f32::from_bits)[..2], [-1.0, 8.0], "v1(=0) − v0; v3 − v1(=0)");
    assert_eq!(out(&r, 0, 1).map(f32::from_bits)[..2], [0.0, 0.0], "inactive lanes are not written");
}

/// After a DEMOTE the helper's value feeds derivatives exactly; after a KILL every derivative
/// that reads the killed lane is unconstrained (GL: undefined after a non-uniform discard) and
/// the others stay exact.
#[test]
fn derivatives_after_demote_are_exact_and_after_kill_unconstrained() {
    let inputs = r#"{"IN[0]": [[1, 0, 0, 0], [-2, 0, 0, 0], [4, 0, 0, 0], [8, 0, 0, 0]]}"#;
    let acc = |r: &Run, lane: usize, c: usize| r.output_accuracy(RegKey::new(File::Output, 0), lane, c);
    let body = |discard: &str| {
        format!(
            "MOV OUT[0], IMM[0].xxxx
            SLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
            IF TEMP[0].xxxx
              {discard}
            ENDIF
            DDX OUT[0].x, IN[0].xxxx
            DDY OUT[0].y, IN[0].xxxx
            DDX_FINE OUT[0].z, IN[0].xxxx
            DDY_FINE OUT[0].w, IN[0].xxxx"
        )
    };
    let r = run("FRAG", FS, &body("DEMOTE"), inputs);
    assert_eq!(r.outputs.killed, vec![1]);
    for l in 0..4 {
        for c in 0..4 {
            assert_eq!(acc(&r, l, c), Accuracy::Exact, "lane {l} .{c}");
        }
    }
    // Lane 1 (demoted) contributes its -2: coarse x = v1 − v0, fine x of row 0, fine y of column 1.
    assert_eq!(out(&r, 0, 0).map(f32::from_bits), [-3.0, 3.0, -3.0, 3.0]);
    assert_eq!(out(&r, 0, 3).map(f32::from_bits), [-3.0, 3.0, 4.0, 10.0]);
    let r = run("FRAG", FS, &body("KILL"), inputs);
    assert_eq!(r.outputs.killed, vec![1]);
    for l in [0, 2, 3] {
        // Coarse DDX reads lanes 0 and 1; DDY lanes 0 and 2.
        assert_eq!(acc(&r, l, 0), Accuracy::Unconstrained, "lane {l} DDX");
        assert_eq!(acc(&r, l, 1), Accuracy::Exact, "lane {l} DDY");
        assert_eq!(f32::from_bits(out(&r, 0, l)[1]), 3.0);
    }
    // Fine derivatives: only lane 0's row and lane 3's column read lane 1.
    assert_eq!(acc(&r, 0, 2), Accuracy::Unconstrained);
    assert_eq!([acc(&r, 2, 2), acc(&r, 3, 2)], [Accuracy::Exact; 2]);
    assert_eq!(f32::from_bits(out(&r, 0, 2)[2]), 4.0, "row 1: v3 − v2");
    assert_eq!(acc(&r, 3, 3), Accuracy::Unconstrained);
    assert_eq!([acc(&r, 0, 3), acc(&r, 2, 3)], [Accuracy::Exact; 2]);
    assert_eq!(f32::from_bits(out(&r, 0, 0)[3]), 3.0, "column 0: v2 − v0");
}

/// Subgroup operations after DEMOTE or KILL: a helper lane may or may not take part (the
/// hardware keeps a discarded lane until the compiler's `.discard` point), so a result is exact
/// only when every choice gives it; a killed lane's source is not even known.
#[test]
fn subgroup_results_with_optional_helper_lanes() {
    let acc = |r: &Run, c: usize| r.output_accuracy(RegKey::new(File::Output, 0), 2, c);
    let body = |discard: &str| {
        format!(
            "SLT TEMP[0].x, IN[0].xxxx, IMM[0].xxxx
            IF TEMP[0].xxxx
              {discard}
            ENDIF
            BALLOT TEMP[1], IN[0].yyyy
            VOTE_ANY TEMP[2].x, IN[0].zzzz
            VOTE_ALL TEMP[2].y, IN[0].wwww
            READ_FIRST TEMP[2].z, IN[0].yyyy
            MOV OUT[0].x, TEMP[1].xxxx
            MOV OUT[0].yzw, TEMP[2].xxyz"
        )
    };
    let inputs = |x: [i32; 4]| {
        format!(r#"{{"IN[0]": [[{}, 1, 0, 1], [{}, 0, 5, 0], [{}, 1, 0, 1], [{}, 1, 0, 1]]}}"#, x[0], x[1], x[2], x[3])
    };
    use Accuracy::{Exact, Unconstrained};
    // Lane 1 demoted: it may vote. Its y is 0, so the ballot is 0b1101 either way; its z and w
    // flip ANY and ALL; READ_FIRST is lane 0's either way.
    let r = run("FRAG", FS, &body("DEMOTE"), &inputs([1, -2, 4, 8]));
    assert_eq!(out(&r, 0, 2), [0b1101, 0, !0, f(1.0)]);
    assert_eq!((0..4).map(|c| acc(&r, c)).collect::<Vec<_>>(), [Exact, Unconstrained, Unconstrained, Exact]);
    // Lane 1 killed: its sources are unknown, so only READ_FIRST (lane 0 comes first) is exact.
    let r = run("FRAG", FS, &body("KILL"), &inputs([1, -2, 4, 8]));
    assert_eq!((0..4).map(|c| acc(&r, c)).collect::<Vec<_>>(), [Unconstrained, Unconstrained, Unconstrained, Exact]);
    // Lane 0 killed: ANY is already true and ALL already false without it; READ_FIRST may read it.
    let r = run("FRAG", FS, &body("KILL"), &inputs([-1, 2, 4, 8]));
    assert_eq!(out(&r, 0, 2)[1..3], [!0, 0]);
    assert_eq!((0..4).map(|c| acc(&r, c)).collect::<Vec<_>>(), [Unconstrained, Exact, Exact, Unconstrained]);
    // Lane 0 demoted: READ_FIRST may read its y = 1 instead of lane 1's 0.
    let r = run("FRAG", FS, &body("DEMOTE"), &inputs([-1, 2, 4, 8]));
    assert_eq!(out(&r, 0, 2)[3], 0);
    assert_eq!(acc(&r, 3), Unconstrained);
}

/// A lane whose branch could go either way (uncertain) may have run another path in the other
/// executor: derivatives reading it are unconstrained, the others stay exact.
#[test]
fn derivatives_reading_an_uncertain_lane_are_unconstrained() {
    let third = (1.0f32 / 3.0).to_bits();
    let decls = format!("{FS}\nIMM[1] UINT32 {{{third}, 0, 0, 0}}");
    let body = "MOV TEMP[1], IMM[0].xxxx
        RCP TEMP[0].x, IN[0].xxxx
        FSGE TEMP[0].y, TEMP[0].xxxx, IMM[1].xxxx
        UIF TEMP[0].yyyy
          MOV TEMP[1].x, IMM[0].yyyy
        ENDIF
        DDX OUT[0].x, IN[0].yyyy
        DDY OUT[0].y, IN[0].yyyy";
    let inputs = r#"{"IN[0]": [[1, 1, 0, 0], [3, 2, 0, 0], [1, 4, 0, 0], [1, 8, 0, 0]]}"#;
    let r = run("FRAG", &decls, body, inputs);
    assert_eq!(r.uncertain_lanes, vec![1], "RCP(3) against its nominal value could go either way");
    let acc = |lane: usize, c: usize| r.output_accuracy(RegKey::new(File::Output, 0), lane, c);
    // DDX reads lanes 0 and 1, DDY lanes 0 and 2.
    assert_eq!([acc(0, 0), acc(2, 0), acc(3, 0)], [Accuracy::Unconstrained; 3]);
    assert_eq!([acc(0, 1), acc(2, 1), acc(3, 1)], [Accuracy::Exact; 3]);
    assert_eq!(f32::from_bits(out(&r, 0, 3)[1]), 3.0);
}

#[test]
fn texture_lookups_match_the_model() {
    let decls = "DCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT";
    let inputs = r#"{"IN[0]": [[0.1, 0.2, 0, 1.5], [0.6, 0.2, 0, 1.5], [0.1, 0.7, 0, 1.5], [0.6, 0.7, 0, 1.5]], "textures": {"0": {"dim": "2d", "width": 16, "height": 16, "seed": 3}}}"#;
    let tex = Texture {
        dim: Dim::D2,
        array: false,
        width: 16,
        height: 16,
        depth: 1,
        layers: 1,
        levels: 0,
        kind: TexelKind::Float,
        seed: 3,
        samples: 1,
    };
    let coords = [[0.1f32, 0.2], [0.6, 0.2], [0.1, 0.7], [0.6, 0.7]];
    let at = |l: usize| SampleCoords { s: coords[l][0], t: coords[l][1], ..SampleCoords::default() };
    // TXL: explicit LOD in w.
    let r = run("FRAG", decls, "TXL OUT[0], IN[0], SAMP[0], 2D", inputs);
    for l in 0..4 {
        assert_eq!(out(&r, 0, l), tex.sample(at(l), lod_to_fixed88(1.5)), "lane {l}");
    }
    // TEX: implicit LOD from the quad.
    let quad = coords.map(|c| [c[0], c[1], 0.0]);
    let lod = tex.implicit_lod(&quad);
    let r = run("FRAG", decls, "TEX OUT[0], IN[0], SAMP[0], 2D", inputs);
    for l in 0..4 {
        assert_eq!(out(&r, 0, l), tex.sample(at(l), lod));
        assert_eq!(r.output_accuracy(RegKey::new(File::Output, 0), l, 0), Accuracy::Exact);
    }
    // TXB adds the bias to the implicit LOD; TXF fetches texels.
    let r = run("FRAG", decls, "TXB OUT[0], IN[0], SAMP[0], 2D", inputs);
    assert_eq!(out(&r, 0, 0), tex.sample(at(0), lod + lod_to_fixed88(1.5)));
    let fetch = r#"{"IN[0]": ["0x3", "0x5", "0x0", "0x1"], "textures": {"0": {"dim": "2d", "width": 16, "height": 16, "seed": 3}}}"#;
    let r = run("FRAG", decls, "TXF OUT[0], IN[0], SAMP[0], 2D", fetch);
    assert_eq!(out(&r, 0, 0), tex.texel(1, 0, 3, 5, 0));
    // TXQ: size of level 1 and the level count.
    let r = run("FRAG", decls, "TXQ OUT[0], IN[0].wwww, SAMP[0], 2D", fetch);
    assert_eq!(out(&r, 0, 0), [8, 8, 0, 5]);
    // A shadow lookup compares the reference in z.
    let decls_shadow = "DCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]";
    let texel = f32::from_bits(Texture::default_for(Dim::D2, false, TexelKind::Float, 0).texel(0, 0, 0, 0, 0)[0]);
    let shadow = format!(r#"{{"IN[0]": [0, 0, {texel}, 0]}}"#);
    let r = run("FRAG", decls_shadow, "TEX_LZ OUT[0], IN[0], SAMP[0], SHADOW2D", &shadow);
    assert_eq!(out(&r, 0, 0), [f(1.0); 4]);
}

#[test]
fn memory_buffers_and_atomics_in_lane_order() {
    let decls = "DCL SV[0], THREAD_ID\nDCL BUFFER[0]\nDCL TEMP[0..1]\nIMM[0] UINT32 {4, 16, 1, 0}";
    let body = "UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
        LOAD TEMP[1], BUFFER[0], TEMP[0].xxxx
        STORE BUFFER[0].xy, IMM[0].yyyy, TEMP[1].yxxx
        ATOMUADD TEMP[1].z, BUFFER[0], IMM[0].wwww, IMM[0].zzzz
        UADD TEMP[1].w, TEMP[1].zzzz, IMM[0].zzzz
        STORE BUFFER[0].x, TEMP[1].wwww, SV[0].xxxx";
    let inputs = r#"{"SV[0]": [["0x0", 0, 0, 0], ["0x1", 0, 0, 0], ["0x2", 0, 0, 0], ["0x3", 0, 0, 0]],
        "buffers": {"0": ["0x64", "0x65", "0x66", "0x67", "0x68", "0x69", "0x6a", "0x6b"]}}"#;
    let r = run("COMP", decls, body, inputs);
    let b = &r.outputs.buffers[&0];
    // Atomics run lanes 0..3 in order: word 0 goes 100 → 104, returning 100..103; each lane
    // then stores its id at byte address old+1 (word (old + 1) / 4 = 25 → out of range: dropped).
    assert_eq!(b[0], 104);
    // STORE .xy at byte 16: words 4 and 5 get lane 3's (y, x) of words 3/4 read before.
    assert_eq!(b[4], 0x68);
    assert_eq!(b[5], 0x67);
    assert_eq!(b.len(), 8);
}

#[test]
fn memory_written_under_uncertain_control_flow_is_unconstrained() {
    // RCP(1) ≥ 1 could go either way: lane 0's branch is uncertain. The store it skips or
    // makes (to BUFFER[0]) leaves every word of BUFFER[0] open; BUFFER[1] is only read and
    // stays exact.
    let decls = "DCL SV[0], THREAD_ID\nDCL BUFFER[0]\nDCL BUFFER[1]\nDCL CONST[0]\nDCL TEMP[0..1]\n\
                 IMM[0] UINT32 {0, 4, 7, 0}\nIMM[1] FLT32 {1.0, 0.5, 0, 0}";
    let body = "USEQ TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
        UCMP TEMP[0].y, TEMP[0].xxxx, CONST[0].xxxx, IMM[1].yyyy
        RCP TEMP[0].z, TEMP[0].yyyy
        FSGE TEMP[0].w, TEMP[0].zzzz, IMM[1].xxxx
        UIF TEMP[0].wwww
          STORE BUFFER[0].x, IMM[0].yyyy, IMM[0].zzzz
        ENDIF
        LOAD TEMP[1], BUFFER[0], IMM[0].xxxx
        LOAD TEMP[1].y, BUFFER[1], IMM[0].xxxx";
    let inputs = r#"{"SV[0]": [["0x0", 0, 0, 0], ["0x1", 0, 0, 0], ["0x2", 0, 0, 0], ["0x3", 0, 0, 0]],
        "CONST[0]": [1, 0, 0, 0], "buffers": {"0": ["0x1", "0x2"], "1": ["0x3", "0x4"]}}"#;
    let r = run("COMP", decls, body, inputs);
    assert_eq!(r.uncertain_lanes, vec![0]);
    assert_eq!(r.buffer_accuracy[&0], vec![Accuracy::Unconstrained; 2]);
    assert_eq!(r.buffer_accuracy[&1], vec![Accuracy::Exact; 2]);
}

#[test]
fn indirect_addressing_out_of_range() {
    let decls = "DCL IN[0]\nDCL OUT[0], POSITION\nDCL CONST[0..1]\nDCL TEMP[0..1], ARRAY(1)\nDCL TEMP[2]\nDCL ADDR[0]\nIMM[0] FLT32 {    0.0000,     1.0000,     2.0000,     7.0000}";
    let body = "MOV TEMP[0], IMM[0].yyyy
        MOV TEMP[1], IMM[0].zzzz
        MOV TEMP[2], IMM[0].wwww
        ARL ADDR[0].x, IN[0].xxxx
        MOV TEMP[ADDR[0].x](1), IMM[0].xxxx
        MOV OUT[0].x, CONST[ADDR[0].x].xxxx
        MOV OUT[0].y, TEMP[ADDR[0].x](1).xxxx
        MOV OUT[0].z, TEMP[2].xxxx
        MOV OUT[0].w, TEMP[1].xxxx";
    let inputs = r#"{"IN[0]": [[1, 0, 0, 0], [2, 0, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 0]], "CONST[0]": [5, 0, 0, 0], "CONST[1]": [6, 0, 0, 0]}"#;
    let r = run("VERT", decls, body, inputs);
    // Lane 0: index 1 in range. Lane 1: index 2 is outside ARRAY(1) (TEMP[2] keeps 7) and
    // outside CONST: reads 0. Lane 2: −1 reads 0. Lane 3: index 0.
    assert_eq!(out(&r, 0, 0).map(f32::from_bits), [6.0, 0.0, 7.0, 0.0]);
    assert_eq!(out(&r, 0, 1).map(f32::from_bits), [0.0, 0.0, 7.0, 2.0]);
    assert_eq!(out(&r, 0, 2).map(f32::from_bits), [0.0, 0.0, 7.0, 2.0]);
    assert_eq!(out(&r, 0, 3).map(f32::from_bits), [5.0, 0.0, 7.0, 2.0]);
}

#[test]
fn sixty_four_bit_pairs() {
    let decls = "DCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL TEMP[0..1]";
    let d = |x: f64| (x.to_bits() as u32, (x.to_bits() >> 32) as u32);
    let (a0, a1) = d(1.5);
    let (b0, b1) = d(-0.25);
    let inputs = format!(
        r#"{{"IN[0]": ["0x{a0:x}", "0x{a1:x}", "0xffffffff", "0x0"], "IN[1]": ["0x{b0:x}", "0x{b1:x}", "0x1", "0x0"]}}"#
    );
    let r = run(
        "VERT",
        decls,
        "DADD TEMP[0].xy, IN[0], IN[1]\nD2F OUT[0].y, TEMP[0]\nU64ADD OUT[0].zw, IN[0].zwzw, IN[1].zwzw\nDSLT OUT[0].x, IN[1], IN[0]",
        &inputs,
    );
    let o = out(&r, 0, 0);
    assert_eq!(o[1], f(1.25), "the first enabled channel receives pair xy");
    assert_eq!([o[2], o[3]], [0, 1], "carry into the high word");
    assert_eq!(o[0], 0xffff_ffff);
    let r = run("VERT", decls, "U64SHL TEMP[0], IN[0].zwzw, IN[1].zzxx\nMOV OUT[0], TEMP[0]", &inputs);
    // pair xy shifted by src1.x (= 1), pair zw by src1.y (= 1, tgsi.rst; src1.z would be b0).
    assert_eq!(out(&r, 0, 0), [0xffff_fffe, 1, 0xffff_fffe, 1]);
    let r = run("VERT", decls, "U64SHR TEMP[0], IN[0].zwzw, IN[1].zxzz\nMOV OUT[0], TEMP[0]", &inputs);
    // src1 = (1, b0, 1, 1) with b0 = 0 (the low word of −0.25): pair zw is not shifted.
    assert_eq!(out(&r, 0, 0), [0x7fff_ffff, 0, 0xffff_ffff, 0]);
    let body =
        "MOV TEMP[1], IN[0].wwww\nI64DIV OUT[0].xy, IN[0].zwzw, IN[1].zwzw\nI64DIV OUT[0].zw, IN[0].zwzw, TEMP[1]";
    let r = run("VERT", decls, body, &inputs);
    assert_eq!(
        out(&r, 0, 0),
        [0xffff_ffff, 0, 0xffff_ffff, 0xffff_ffff],
        "4294967295 / 1, and signed division of a non-negative value by zero gives −1"
    );
}

#[test]
fn unsupported_constructs_are_errors_naming_them() {
    let decls = "DCL IMAGE[0], BUFFER, RAW, WR\nDCL TEMP[0]";
    let e = try_run("COMP", decls, "LOAD TEMP[0], IMAGE[0], TEMP[0]", "{}").unwrap_err();
    assert!(e.to_string().contains("RAW"), "{e}");
    let e = try_run("VERT", "DCL IN[0]\nDCL OUT[0], POSITION", "NOISE1 OUT[0], IN[0]", "{}").unwrap_err();
    assert!(e.to_string().contains("NOISE1"), "{e}");
    assert!(matches!(e, InterpError::Unsupported { .. }));
    let e = try_run(
        "GEOM",
        "PROPERTY GS_INPUT_PRIMITIVE POINTS\nDCL OUT[0], POSITION",
        "EMIT IMM[0].xxxx\nIMM[0] UINT32 {0, 0, 0, 0}",
        "{}",
    );
    assert!(e.is_err());
}

#[test]
fn endless_loops_hit_the_step_limit() {
    let text = program("VERT", "DCL OUT[0], POSITION", "BGNLOOP\nENDLOOP\nMOV OUT[0], OUT[0]");
    let program = tgsi2va::tgsi::parse(&text).unwrap();
    let e = interp::run_with(&program, &Inputs::default(), &Options { step_limit: 1000, ..Options::default() })
        .unwrap_err();
    assert!(matches!(e, InterpError::StepLimit { steps: 1000, .. }), "{e}");
}

#[test]
fn legacy_counted_loops_and_conditional_break() {
    let decls =
        "DCL IN[0]\nDCL OUT[0], POSITION\nDCL TEMP[0]\nIMM[0] FLT32 {    0.0000,     1.0000,     3.0000,     0.0000}";
    let body = "MOV TEMP[0], IMM[0].xxxx
        REP IN[0].xxxx
          ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
        ENDREP
        MOV OUT[0], TEMP[0]";
    let r = run("VERT", decls, body, r#"{"IN[0]": [[3, 0, 0, 0], [0, 0, 0, 0], [-2, 0, 0, 0], [5.9, 0, 0, 0]]}"#);
    assert_eq!(lanes_x(&r, 0), [3.0, 0.0, 0.0, 5.0]);
    let body = "MOV TEMP[0], IMM[0].xxxx
        BGNLOOP
          ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
          FSGE TEMP[0].y, TEMP[0].xxxx, IN[0].xxxx
          BREAKC TEMP[0].yyyy
        ENDLOOP
        MOV OUT[0], TEMP[0]";
    let r = run("VERT", decls, body, r#"{"IN[0]": [[3, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0], [4, 0, 0, 0]]}"#);
    assert_eq!(lanes_x(&r, 0), [3.0, 1.0, 2.0, 4.0]);
}
