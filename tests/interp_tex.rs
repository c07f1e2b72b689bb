//! Texture opcodes of the TGSI reference interpreter: texel fetches with offsets (also at the
//! ends of the i32 range) and indirectly indexed samplers and views, against the shared
//! procedural texture model read directly.

use tgsi2va::exec::io::{Inputs, RegKey};
use tgsi2va::exec::texture::{Dim, TexelKind, Texture};
use tgsi2va::interp::{self, Accuracy, Run};
use tgsi2va::tgsi::ast::File;

fn run(text: &str, inputs: &str) -> Run {
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let inputs = Inputs::from_json(inputs).unwrap();
    interp::run(&program, &inputs).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn out(run: &Run, index: u32, lane: usize) -> [u32; 4] {
    run.outputs.outputs[&RegKey::new(File::Output, index)][lane]
}

fn tex2d(unit: u32, kind: TexelKind) -> Texture {
    Texture::default_for(Dim::D2, false, kind, unit)
}

#[test]
fn sample_i_applies_texel_offsets() {
    let text = "VERT\nDCL OUT[0], POSITION\nDCL SVIEW[0], 2D, FLOAT\nIMM[0] INT32 {3, 4, 0, 0}\n\
                IMM[1] INT32 {1, 2, -1, 0}\n  0: SAMPLE_I OUT[0], IMM[0], SVIEW[0], IMM[1].xyz\n  1: END\n";
    let r = run(text, "{}");
    assert_eq!(out(&r, 0, 0), tex2d(0, TexelKind::Float).texel(0, 0, 4, 6, 0));
    let text = text.replace("IMM[1].xyz", "IMM[1].zzz");
    let r = run(&text, "{}");
    assert_eq!(out(&r, 0, 0), tex2d(0, TexelKind::Float).texel(0, 0, 2, 3, 0));
}

#[test]
fn texel_fetch_offsets_at_the_ends_of_the_range_fetch_zeros() {
    // x = INT_MIN − 1 and y = INT_MAX + 1 wrap to the other end: outside the level either way.
    let text = "FRAG\nDCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT\n\
                IMM[0] UINT32 {2147483648, 2147483647, 0, 0}\nIMM[1] INT32 {-1, 1, 0, 0}\n\
                  0: TXF OUT[0], IMM[0].xzzz, SAMP[0], 2D, IMM[1].xzz\n\
                  1: TXF OUT[1], IMM[0].zyzz, SAMP[0], 2D, IMM[1].zyz\n  2: END\n";
    let text = text.replace("DCL OUT[0], COLOR", "DCL OUT[0], COLOR[0]\nDCL OUT[1], COLOR[1]");
    let r = run(&text, "{}");
    for l in 0..4 {
        assert_eq!(out(&r, 0, l), [0; 4]);
        assert_eq!(out(&r, 1, l), [0; 4]);
        assert_eq!(r.output_accuracy(RegKey::new(File::Output, 0), l, 0), Accuracy::Exact);
    }
}

#[test]
fn indirect_samplers_and_views_resolve_per_lane() {
    // Lane l indexes unit l + 1 (TXF through SAMP) and unit l (SAMPLE_I through SVIEW); units
    // beyond the declarations (SAMP[3], SAMP[4], SVIEW[3]) are undefined: unconstrained.
    let text = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\nDCL OUT[2], GENERIC[1]\n\
                DCL SAMP[0..2]\nDCL SVIEW[0..2], 2D, UINT\nDCL ADDR[0]\nIMM[0] INT32 {3, 4, 0, 0}\n\
                  0: ARL ADDR[0].x, IN[0].xxxx\n\
                  1: TXF OUT[1], IMM[0], SAMP[ADDR[0].x+1], 2D\n\
                  2: SAMPLE_I OUT[2], IMM[0], SVIEW[ADDR[0].x]\n  3: END\n";
    let r = run(text, r#"{"IN[0]": [[0, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0]]}"#);
    let acc = |index: u32, lane: usize| r.output_accuracy(RegKey::new(File::Output, index), lane, 0);
    for lane in 0..4 {
        let samp = lane as u32 + 1;
        if samp <= 2 {
            assert_eq!(out(&r, 1, lane), tex2d(samp, TexelKind::Uint).texel(0, 0, 3, 4, 0), "lane {lane}");
            assert_eq!(acc(1, lane), Accuracy::Exact);
        } else {
            assert_eq!(acc(1, lane), Accuracy::Unconstrained, "lane {lane}");
        }
        let view = lane as u32;
        if view <= 2 {
            assert_eq!(out(&r, 2, lane), tex2d(view, TexelKind::Uint).texel(0, 0, 3, 4, 0), "lane {lane}");
            assert_eq!(acc(2, lane), Accuracy::Exact);
        } else {
            assert_eq!(acc(2, lane), Accuracy::Unconstrained, "lane {lane}");
        }
    }
    assert!(r.uncertain_lanes.is_empty());
    // An address that an approximation could change makes the lane uncertain.
    let text = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\nDCL SAMP[0..2]\nDCL ADDR[0]\n\
                DCL TEMP[0]\nIMM[0] INT32 {3, 4, 0, 0}\n  0: RCP TEMP[0].x, IN[0].xxxx\n\
                  1: ARL ADDR[0].x, TEMP[0].xxxx\n  2: TXF OUT[1], IMM[0], SAMP[ADDR[0].x], 2D\n  3: END\n";
    let r = run(text, r#"{"IN[0]": [[1, 0, 0, 0], [1, 0, 0, 0], [4, 0, 0, 0], [4, 0, 0, 0]]}"#);
    assert_eq!(r.uncertain_lanes, vec![0, 1], "RCP(1) may be just below 1: ARL gives 0 or 1");
}
