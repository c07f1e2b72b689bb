//! Round trips: `print(parse(x)) == x` byte for byte for every canonical text (our fixtures in
//! `tests/tgsi/`, every `tgsi-samples/**/*.tgsi`, the examples of the format specification),
//! and `parse(print(ast)) == ast` (spans cleared).

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use tgsi2va::tgsi::{self, PrintOptions, ast::Program};

#[path = "common/files.rs"]
mod files;
use files::collect_tgsi;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn parse_ok(text: &str, what: &str) -> Program {
    match tgsi::parse(text) {
        Ok(p) => p,
        Err(e) => {
            panic!("{what} does not parse:\n{}", tgsi2va::diag::render(&e.0, what, text, Default::default(), false))
        }
    }
}

fn cleared(mut p: Program) -> Program {
    p.clear_spans();
    p
}

/// Both invariants for one canonical text.
fn assert_round_trip(text: &str, what: &str) {
    let program = parse_ok(text, what);
    let printed = tgsi::print(&program);
    assert_eq!(printed, text, "print(parse(x)) != x for {what}");
    let reparsed = parse_ok(&printed, what);
    assert_eq!(cleared(reparsed), cleared(program), "parse(print(ast)) != ast for {what}");
}

#[test]
fn fixtures_and_samples_round_trip() {
    let mut files = Vec::new();
    collect_tgsi(&root().join("tests/tgsi"), &mut files);
    let fixtures = files.len();
    collect_tgsi(&root().join("tgsi-samples"), &mut files);
    assert!(fixtures >= 10, "our own fixtures are missing");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        assert_round_trip(&text, &path.display().to_string());
    }
}

#[test]
fn fixtures_and_samples_pass_the_checker() {
    let mut files = Vec::new();
    collect_tgsi(&root().join("tests/tgsi"), &mut files);
    collect_tgsi(&root().join("tgsi-samples"), &mut files);
    for path in files.iter().filter(|p| !p.ends_with("all_opcodes.tgsi")) {
        let text = std::fs::read_to_string(path).unwrap();
        let program = parse_ok(&text, &path.display().to_string());
        let errors: Vec<_> = tgsi::check(&program).into_iter().filter(|d| d.is_error()).collect();
        assert!(
            errors.is_empty(),
            "{}",
            tgsi2va::diag::render(&errors, &path.display().to_string(), &text, Default::default(), false)
        );
    }
}

/// Input → exact output.
fn assert_prints(input: &str, expected: &str) {
    let program = parse_ok(input, "input");
    assert_eq!(tgsi::print(&program), expected);
    assert_round_trip(expected, "expected output");
}

#[test]
fn spec_12_case_and_spacing() {
    assert_prints(
        "FRAG\nDCL TEMP[0]\nmov temp[0], -|temp[0]|\nMov_Sat Temp[0] , - Temp [ 0 ] . wzyx\nEND\n",
        "FRAG\nDCL TEMP[0]\n  0: MOV TEMP[0], -|TEMP[0]|\n  1: MOV_SAT TEMP[0], -TEMP[0].wzyx\n  2: END\n",
    );
}

#[test]
fn spec_12_geometry_shader() {
    // Mesa wraps STREAM(5, …) to 1; we reject it (see tgsi_errors) and check the rest.
    let input = concat!(
        "GEOM\nPROPERTY GS_INPUT_PRIMITIVE TRIANGLES\nDCL IN[][0], POSITION\nDCL IN[3][1], GENERIC[0]\n",
        "DCL OUT[0], POSITION, STREAM(1, 0, 0, 0)\n  0: MOV OUT[0], IN[1][0]\n  1: EMIT IMM[0].xxxx\n  2: END\n"
    );
    let expected = concat!(
        "GEOM\nPROPERTY GS_INPUT_PRIMITIVE TRIANGLES\nDCL IN[][0], POSITION\nDCL IN[][1], GENERIC[0]\n",
        "DCL OUT[0], POSITION, STREAM(1, 0, 0, 0)\n  0: MOV OUT[0], IN[1][0]\n  1: EMIT IMM[0].xxxx\n  2: END\n"
    );
    assert_prints(input, expected);
    let five = input.replace("STREAM(1,", "STREAM(5,");
    let errors = tgsi::parse(&five).unwrap_err();
    assert_eq!(errors.0[0].code, "E0024");
    assert!(errors.0[0].notes[0].contains("turn 5 into 1"), "{:?}", errors.0[0].notes);
}

#[test]
fn spec_12_labels_offsets_components() {
    assert_prints(
        "VERT\nDCL CONST[0..7]\nDCL ADDR[0]\n9: MOV OUT[0], CONST[ADDR[0]]\n 3: MOV OUT[0], CONST[ADDR[0].x-0]\nEND\n",
        "VERT\nDCL CONST[0..7]\nDCL ADDR[0]\n  0: MOV OUT[0], CONST[ADDR[0].x]\n  1: MOV OUT[0], CONST[ADDR[0].x]\n  2: END\n",
    );
}

#[test]
fn spec_12_inputs_mesa_rejects() {
    // Accepted on purpose (leniencies, legacy syntax).
    assert_prints("FRAG\n  0: MOV TEMP[0].x, IN[0].x\n", "FRAG\n  0: MOV TEMP[0].x, IN[0].xxxx\n");
    assert_prints("FRAG1.1\n  0: END\n", "FRAG1.1\n  0: END\n");
    assert_prints("FRAG\r\nDCL TEMP[0]\r\n  0: END\r\n", "FRAG\nDCL TEMP[0]\n  0: END\n");
    assert_prints("FRAG\n  0: BGNSUB :1\n  1: ENDSUB\n", "FRAG\n  0: BGNSUB :1\n  1: ENDSUB\n");
    assert_prints("VERT\nDCL IN[0], POSITION\n", "VERT\nDCL IN[0], POSITION\n");
    // Rejected like Mesa, with our codes.
    for (text, code) in [
        ("FRAG\nIMM[1] FLT32 {1, 2, 3, 4}\n", "E0023"),
        ("FRAG\n# comment\n", "E0003"),
        ("COMP\n  0: ATOMFADD TEMP[0], BUFFER[0], TEMP[1], TEMP[2], COHERENT\n", "E0053"),
        ("FRAG\n  0: MOV_PRECISE_SAT TEMP[0], TEMP[1]\n", "E0043"),
    ] {
        let errors = tgsi::parse(text).unwrap_err();
        assert_eq!(errors.0[0].code, code, "{text}");
    }
}

#[test]
fn spec_6_observed_declarations() {
    let gs = "GEOM\nDCL IN[][1], GENERIC[0]\n";
    assert_round_trip(gs, "GS input");
    assert_prints("GEOM\nDCL IN[3][1], GENERIC[0]\n", gs);
    let tcs = "TESS_CTRL\nDCL OUT[][0], POSITION\nDCL OUT[4], PATCH\n";
    assert_round_trip(tcs, "TCS outputs");
    assert_prints("TESS_CTRL\nDCL OUT[][0], POSITION\nDCL OUT[4], PATCH[0]\n", tcs);
    let fs = concat!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE, CENTROID\nDCL CONST[1][0..3]\nDCL TEMP[1..2], ARRAY(3), LOCAL\n",
        "DCL IMAGE[1], BUFFER, PIPE_FORMAT_R32_UINT, WR, RAW\nDCL IMAGE[3], 2D, PIPE_FORMAT_NONE\n",
        "DCL MEMORY[4], GLOBAL\nDCL SVIEW[4], BUFFER, UNORM\nDCL HWATOMIC[0][0..3], ARRAY(1)\n"
    );
    assert_round_trip(fs, "FS declarations");
    assert_round_trip("VERT\nDCL OUT[0], POSITION, CENTROID\nDCL OUT[1].xy, ARRAY(1), GENERIC[3]\n", "VS outputs");
    assert_round_trip("GEOM\nDCL OUT[0], POSITION, STREAM(1, 0, 0, 0)\n", "GS stream");
    // Defaults Mesa fills in.
    assert_prints(
        "FRAG\nDCL SVIEW[4]\nDCL IMAGE[3]\nDCL MEMORY[4]\n",
        "FRAG\nDCL SVIEW[4], BUFFER, UNORM\nDCL IMAGE[3], BUFFER, PIPE_FORMAT_NONE\nDCL MEMORY[4], GLOBAL\n",
    );
    // Any order of IMAGE items prints as target, format, WR, RAW.
    assert_prints(
        "COMP\nDCL IMAGE[1], BUFFER, RAW, PIPE_FORMAT_R32_UINT, WR\n",
        "COMP\nDCL IMAGE[1], BUFFER, PIPE_FORMAT_R32_UINT, WR, RAW\n",
    );
    // Semantic index 0 is printed only for GENERIC and TEXCOORD.
    assert_prints(
        "FRAG\nDCL IN[0], COLOR[0]\nDCL IN[1], TEXCOORD\n",
        "FRAG\nDCL IN[0], COLOR\nDCL IN[1], TEXCOORD[0]\n",
    );
    // Empty brackets with an implied size.
    assert_prints("TESS_CTRL\nDCL TEMP[]\n", "TESS_CTRL\nDCL TEMP[0..31]\n");
    assert_prints(
        "GEOM\nPROPERTY GS_INPUT_PRIMITIVE LINES_ADJACENCY\nDCL IN[0][]\n",
        "GEOM\nPROPERTY GS_INPUT_PRIMITIVE LINES_ADJACENCY\nDCL IN[][0..3]\n",
    );
}

#[test]
fn spec_6_observed_immediates() {
    let text = concat!(
        "FRAG\n",
        "IMM[0] FLT32 {    0.5000,     1.0000,     0.0000,     0.0000}\n",
        "IMM[1] FLT32 {       nan,       -inf,     1.0000,     0.5000}\n",
        "IMM[2] UINT32 {0, 4294967295, 0, 7}\n",
        "IMM[3] INT32 {-2147483648, 5, 0, 2147483647}\n",
        "IMM[4] FLT64 {1.50000000, -0.00000000}\n",
        "IMM[5] INT64 {-16, 63}\n",
        "IMM[6] UINT64 {18446744073709551615, 18446744073709551615}\n"
    );
    assert_round_trip(text, "immediates");
    // %10.4f: -0.0 prints as -0.0000, a growing field, float rounding of the input.
    assert_prints(
        "FRAG\nIMM[0] FLT32 {-0.0, 0.5, 1e10, 123456789.5}\n",
        "FRAG\nIMM[0] FLT32 {   -0.0000,     0.5000, 10000000000.0000, 123456792.0000}\n",
    );
    // Mesa's exact rounding (ties to even on the binary value) when asked for.
    let program = parse_ok("FRAG\nIMM[0] FLT32 {-0.00001, 0.03125, 0.00015, 2.5}\n", "mesa floats");
    assert_eq!(
        tgsi::print_with(&program, PrintOptions { mesa_float_rounding: true, ..PrintOptions::default() }),
        "FRAG\nIMM[0] FLT32 {   -0.0000,     0.0312,     0.0002,     2.5000}\n"
    );
    // By default such values are printed exactly so that nothing is lost.
    assert_eq!(tgsi::print(&program), "FRAG\nIMM[0] FLT32 {  -0.00001,    0.03125,    0.00015,     2.5000}\n");
    // A value %10.4f would round is printed exactly instead, so the tree survives.
    assert_prints(
        "FRAG\nIMM[0] FLT32 {0.1234567, 1, 2, 3}\n",
        "FRAG\nIMM[0] FLT32 { 0.1234567,     1.0000,     2.0000,     3.0000}\n",
    );
    // Raw bits (Mesa's hex printer), hex floats, inf/nan spellings, -nan.
    assert_prints(
        "FRAG\nIMM[0] FLT32 {0x3f800000, 0x1p3, -Infinity, -nan}\n",
        "FRAG\nIMM[0] FLT32 {    1.0000,     8.0000,       -inf,       -nan}\n",
    );
    assert_prints(
        "FRAG\nIMM[0] FLT32 {0x7fc00001, 0, 0, 0}\n",
        "FRAG\nIMM[0] FLT32 {0x7fc00001,     0.0000,     0.0000,     0.0000}\n",
    );
    // strtoll: hex and octal for the 64-bit integer types.
    assert_prints("COMP\nIMM[0] INT64 {0x10, -010}\n", "COMP\nIMM[0] INT64 {16, -8}\n");
    // The hex option.
    let program = parse_ok("FRAG\nIMM[0] FLT32 {1.0, -2.0, 0.5, 0}\n", "hex");
    assert_eq!(
        tgsi::print_with(&program, PrintOptions { float_as_hex: true, ..PrintOptions::default() }),
        "FRAG\nIMM[0] FLT32 {0x3f800000, 0xc0000000, 0x3f000000, 0x00000000}\n"
    );
    assert_round_trip(
        "FRAG\nIMM[0] FLT32 {0x3f800000, 0xc0000000, 0x3f000000, 0x00000000}\n"
            .replace("0x3f800000, 0xc0000000, 0x3f000000, 0x00000000", "    1.0000,    -2.0000,     0.5000,     0.0000")
            .as_str(),
        "hex reread",
    );
    // Legacy unindexed immediates keep their form.
    assert_round_trip("FRAG\nIMM FLT32 {    0.5000,     1.0000,     0.0000,     0.0000}\n", "7.9 immediates");
    assert_round_trip("FRAG\nIMM FLT32 {     0.5000,     1.0000,     0.0000,     0.0000 }\n", "7.8 immediates");
}

#[test]
fn spec_6_observed_instructions() {
    let text = concat!(
        "FRAG\n",
        "  0: TEX TEMP[0], IN[0], SAMP[0], 2D, IMM[0].xyz\n",
        "  1: TXF TEMP[0], IN[0], SAMP[0], 2D_ARRAY, IMM[0].xyx, IMM[0].zzz, IMM[0].xxx, TEMP[1].yyy\n",
        "  2: SAMPLE TEMP[0], IN[0], SVIEW[0], SAMP[0], IMM[0].xyz\n",
        "  3: MOV TEMP[ADDR[0].y-1](1).xy, CONST[1][ADDR[0].z]\n",
        "  4: MOV OUT[0], CONST[ADDR[0].x](3)[ADDR[1].y](2).zwzw\n",
        "  5: MOV_SAT OUT[0], -|TEMP[1].xxxx|\n",
        "  6: STORE IMAGE[0], TEMP[0], TEMP[1], COHERENT, RESTRICT, 2D, PIPE_FORMAT_R32G32B32A32_FLOAT\n",
        "  7: BARRIER, VOLATILE\n",
        "  8: IF TEMP[0].xxxx :12\n",
        "  9:   BGNLOOP :11\n",
        " 10:   ENDLOOP :9\n",
        " 11: ENDIF\n"
    );
    assert_round_trip(text, "observed instructions");
    // Memory items print in a fixed order; an offset without swizzle is .xxx.
    assert_prints(
        "COMP\nSTORE IMAGE[0], TEMP[0], TEMP[1], 2D, PIPE_FORMAT_R32G32B32A32_FLOAT, RESTRICT, COHERENT\n",
        "COMP\n  0: STORE IMAGE[0], TEMP[0], TEMP[1], COHERENT, RESTRICT, 2D, PIPE_FORMAT_R32G32B32A32_FLOAT\n",
    );
    assert_prints(
        "FRAG\nTEX TEMP[0], IN[0], SAMP[0], 2D, IMM[0]\n",
        "FRAG\n  0: TEX TEMP[0], IN[0], SAMP[0], 2D, IMM[0].xxx\n",
    );
    // Negative indentation levels print no spaces and must be climbed back.
    assert_prints(
        "FRAG\nENDIF\nENDIF\nIF TEMP[0].xxxx\nMOV TEMP[0], TEMP[1]\nENDIF\nIF TEMP[0].xxxx\nIF TEMP[0].xxxx\nMOV TEMP[0], TEMP[1]\n",
        "FRAG\n  0: ENDIF\n  1: ENDIF\n  2: IF TEMP[0].xxxx\n  3: MOV TEMP[0], TEMP[1]\n  4: ENDIF\n  5: IF TEMP[0].xxxx\n  6: IF TEMP[0].xxxx\n  7: MOV TEMP[0], TEMP[1]\n",
    );
    // Instruction numbers grow past three columns; SWITCH does not indent.
    let mut long = String::from("FRAG\n");
    for i in 0..1001 {
        long.push_str(&format!("{i:3}: NOP\n"));
    }
    long.push_str("1001: SWITCH TEMP[0].xxxx\n1002: CASE IMM[0].xxxx\n1003: ENDSWITCH\n");
    assert_round_trip(&long, "long listing");
    // A direct ArrayID is kept (Mesa drops it); a location without a mode too.
    assert_round_trip("FRAG\n  0: MOV TEMP[1](2), TEMP[0](2)\n", "direct array id");
    assert_round_trip("FRAG\nDCL IN[0], GENERIC[0], CENTROID\n", "location alone");
    assert_prints("FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE, CENTER\n", "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\n");
    // Per-channel sampler-view types.
    assert_round_trip("FRAG\nDCL SVIEW[2], BUFFER, SINT, UINT, FLOAT, UNORM\n", "sview types");
    // Properties print signed.
    assert_prints("FRAG\nPROPERTY FS_DEPTH_LAYOUT 4294967295\n", "FRAG\nPROPERTY FS_DEPTH_LAYOUT -1\n");
    // Gap opcodes and zero-operand opcodes with items.
    assert_round_trip("COMP\n  0: UNK67\n  1: UNK165, VOLATILE\n  2: BARRIER\n", "gaps");
}

#[test]
fn legacy_opcode_disambiguation() {
    use tgsi2va::tgsi::opcodes::Opcode;
    let p = parse_ok(
        "FRAG\nLOOP\nENDLOOP\nBGNLOOP\nENDLOOP\nLOAD TEMP[0], TEMP[1], RES[0]\nLOAD TEMP[0], BUFFER[0], TEMP[1]\n",
        "legacy",
    );
    let ops: Vec<Opcode> = p.instructions().map(|i| i.opcode).collect();
    assert_eq!(
        ops,
        [Opcode::Loop, Opcode::EndloopLegacy, Opcode::Bgnloop, Opcode::Endloop, Opcode::LoadLegacy, Opcode::Load]
    );
}

#[test]
fn statements_may_share_lines_and_span_lines() {
    assert_prints(
        "FRAG DCL TEMP[0] MOV TEMP[0],\n   TEMP[0] END",
        "FRAG\nDCL TEMP[0]\n  0: MOV TEMP[0], TEMP[0]\n  1: END\n",
    );
}
