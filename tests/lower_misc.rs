//! Lowering of the subgroup, fragment-model, legacy and 64-bit-division opcodes and of
//! indirectly addressed constants: the exact IR
//! each TGSI snippet lowers to (`tests/lower/misc/*.txt`: `=== name`, the TGSI text, `---`,
//! the IR; `BLESS=1 cargo test --test lower_misc` rewrites the IR parts, every expectation was
//! reviewed by hand), the metadata they produce, and the precise rejections that remain.
//! Values are checked by both executors in `tests/exec_misc.rs` and `tests/conventions.rs`.

#[path = "lower/harness.rs"]
mod harness;

use harness::{expectations, lower};
use pretty_assertions::assert_eq;
use tgsi2va::ir::text::print;
use tgsi2va::lower::Options;

/// The first diagnostic of lowering `text`: message and notes.
fn rejection(text: &str) -> String {
    let program = tgsi2va::tgsi::parse(text).unwrap();
    match tgsi2va::lower::lower(&program, &Options::default()) {
        Ok(l) => panic!("lowered:\n{}", print(&l.shader)),
        Err(d) => format!("{} {}", d.0[0].message, d.0[0].notes.join(" ")),
    }
}

#[test]
fn expected_ir_subgroup() {
    expectations("misc", "subgroup.txt");
}

#[test]
fn expected_ir_fragment() {
    expectations("misc", "fragment.txt");
}

#[test]
fn expected_ir_legacy() {
    expectations("misc", "legacy.txt");
}

#[test]
fn expected_ir_constants() {
    expectations("misc", "constants.txt");
}

#[test]
fn expected_ir_div64() {
    expectations("misc", "div64.txt");
}

/// Machine instructions of a lowered compute shader (no epilogue).
fn machine_insts(text: &str) -> usize {
    let s = lower(text).shader;
    (0..s.blocks.len())
        .flat_map(|b| s.block_insts(tgsi2va::ir::Block(b as u32)).collect::<Vec<_>>())
        .filter(|&i| s.inst(i).is_machine())
        .count()
}

#[test]
fn sequence_lengths() {
    let comp = |line: &str| format!("COMP\nDCL CONST[0][0..3]\nDCL TEMP[0..1]\n  0: {line}\n  1: END\n");
    let table = [
        ("BALLOT TEMP[0], CONST[0][0].xxxx", 1),
        ("VOTE_ANY TEMP[0].x, CONST[0][0].xxxx", 2),
        ("VOTE_ALL TEMP[0].x, CONST[0][0].xxxx", 3),
        ("VOTE_EQ TEMP[0].x, CONST[0][0].xxxx", 7),
        ("READ_FIRST TEMP[0].x, CONST[0][0].xxxx", 4),
        ("READ_INVOC TEMP[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 1),
        ("M4X4 TEMP[0], CONST[0][0], CONST[0][1]", 16),
        ("M3X2 TEMP[0], CONST[0][0], CONST[0][1]", 6),
        ("X2D TEMP[0], CONST[0][0], CONST[0][1], CONST[0][2]", 4),
        ("DPH TEMP[0].x, CONST[0][0], CONST[0][1]", 3),
        ("SAD TEMP[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx, CONST[0][2].xxxx", 4),
        // The loop path: setup 12 (with the 8-instruction variable shift), 21 in the loop (with
        // its exit test); the 32-bit path when both high words are zero (the branch, two 32-bit
        // division sequences); 3 for the division-by-zero select (copies of constants are not
        // machine instructions).
        ("U64DIV TEMP[0].xy, CONST[0][0], CONST[0][1]", 101),
        // + 2 × IABS64 (5), the sign XOR and the 64-bit negation and selects (6).
        ("I64DIV TEMP[0].xy, CONST[0][0], CONST[0][1]", 117),
    ];
    let mut wrong = Vec::new();
    for (line, n) in table {
        let got = machine_insts(&comp(line));
        if got != n {
            wrong.push(format!("{line}: {got} instructions, expected {n}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn fbfetch_metadata() {
    let l = lower(
        "FRAG\nDCL OUT[0], COLOR\nDCL OUT[1], COLOR[5]\nDCL TEMP[0]\n  0: FBFETCH TEMP[0], OUT[1]\n\
           1: MOV OUT[0], TEMP[0]\n  2: MOV OUT[1], TEMP[0]\n  3: END\n",
    );
    assert!(l.meta.flags.reads_tile_buffer);
    let json = l.meta.to_json();
    assert!(json.contains("\"name\": \"rt_conversion.5\""), "{json}");
    assert!(json.contains("\"reads_tile_buffer\": true"), "{json}");
    // Shaders without FBFETCH keep their metadata text unchanged.
    let plain = lower("FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], OUT[0]\n  1: END\n");
    assert!(!plain.meta.to_json().contains("reads_tile_buffer"));
}

#[test]
fn interpolated_inputs_keep_their_declared_location() {
    let l = lower(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE, CENTROID\nDCL IN[1], GENERIC[1], PERSPECTIVE, SAMPLE\n\
         DCL OUT[0], COLOR\n  0: ADD OUT[0], IN[0], IN[1]\n  1: END\n",
    );
    let ir = print(&l.shader);
    assert!(ir.contains("src_f32.centroid.store %1, index:0x0"), "{ir}");
    assert!(ir.contains("src_f32.sample.store %1, index:0x10"), "{ir}");
}

#[test]
fn precise_rejections() {
    let cases = [
        ("COMP\nDCL TEMP[0]\n  0: CLOCK TEMP[0].xy\n  1: END\n", "LD_GCLK.u64"),
        (
            "FRAG\nDCL IN[0], POSITION, LINEAR\nDCL OUT[0], COLOR\n  0: INTERP_CENTROID OUT[0], IN[0]\n  1: END\n",
            "only varyings can be interpolated",
        ),
        ("FRAG\nDCL OUT[0], GENERIC[0]\nDCL TEMP[0]\n  0: FBFETCH TEMP[0], OUT[0]\n  1: END\n", "COLOR outputs"),
        ("VERT\nDCL OUT[0], POSITION\n  0: READ_HELPER OUT[0]\n  1: END\n", "only in fragment shaders"),
        ("VERT\nDCL TEMP[0]\n  0: INDEX TEMP[0], TEMP[0], TEMP[0]\n  1: END\n", "never given semantics"),
        ("VERT\nDCL TEMP[0]\n  0: NOISE1 TEMP[0], TEMP[0]\n  1: END\n", "NOISE opcodes"),
        ("VERT\nDCL ADDR[0]\n  0: PUSHA ADDR[0]\n  1: END\n", "address-register stack"),
    ];
    for (text, why) in cases {
        let got = rejection(text);
        assert!(got.contains(why), "{got}\n{text}");
        assert!(!got.contains("no Valhall lowering (see"), "{got}");
    }
}

/// A fragment input or vertex output declared without a semantic has no varying slot: each
/// declaration is rejected once, at its line (both used to become GENERIC[0], so two such
/// inputs read the same varying).
#[test]
fn varyings_without_a_semantic_are_rejected_at_their_declaration() {
    let cases = [
        (
            "FRAG\nDCL IN[0]\nDCL IN[1..2]\nDCL CONST[2]\nDCL OUT[0], COLOR\n  0: ADD OUT[0], IN[0], IN[2]\n  1: END\n",
            "a fragment input without a semantic cannot be compiled for Valhall",
            ["DCL IN[0]", "DCL IN[1..2]"],
        ),
        (
            "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1]\nDCL OUT[2], GENERIC[0]\nDCL OUT[3]\n  0: MOV OUT[0], IN[0]\n  1: MOV OUT[1], IN[0]\n  2: MOV OUT[2], IN[0]\n  3: MOV OUT[3], IN[0]\n  4: END\n",
            "a vertex output without a semantic cannot be compiled for Valhall",
            ["DCL OUT[1]", "DCL OUT[3]"],
        ),
    ];
    for (text, message, declarations) in cases {
        let program = tgsi2va::tgsi::parse(text).unwrap();
        let Err(d) = tgsi2va::lower::lower(&program, &Options::default()) else { panic!("lowered:\n{text}") };
        let spans: Vec<&str> =
            d.0.iter().map(|e| &text[e.primary.span.start as usize..e.primary.span.end as usize]).collect();
        assert_eq!(spans, declarations, "{:?}", d.0);
        assert!(d.0.iter().all(|e| e.message == message && e.notes[0].contains("GENERIC[0]")), "{:?}", d.0);
    }
}

/// A system value lowering cannot provide is reported once per register, not once per
/// component read.
#[test]
fn an_unavailable_system_value_is_reported_once() {
    let text = "FRAG\nDCL SV[0], VIEWPORT_INDEX\nDCL OUT[0], COLOR\n  0: MOV OUT[0], SV[0].xyzw\n  1: ADD OUT[0], SV[0].xxxx, SV[0].yyyy\n  2: END\n";
    let program = tgsi2va::tgsi::parse(text).unwrap();
    let Err(d) = tgsi2va::lower::lower(&program, &Options::default()) else { panic!("lowered") };
    let messages: Vec<&str> = d.0.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["system value VIEWPORT_INDEX cannot be compiled for Valhall"]);
}

/// A matrix product whose rows run past a declared range is rejected by the checker, naming the
/// row's register at the instruction's line (lowering used to report "an undeclared system
/// value" without saying which).
#[test]
fn matrix_rows_past_a_declaration_name_the_register() {
    let text = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL SV[0], VERTEXID\nDCL SV[1], INSTANCEID\nDCL TEMP[0]\n  \
                0: M4X3 TEMP[0], IN[0], SV[0]\n  1: MOV OUT[0], TEMP[0]\n  2: END\n";
    let program = tgsi2va::tgsi::parse(text).unwrap();
    let errors: Vec<_> =
        tgsi2va::tgsi::check(&program).into_iter().filter(|d| d.severity == tgsi2va::diag::Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.message, "SV[2] is not declared");
    let line = text[..e.primary.span.start as usize].lines().count();
    assert_eq!(line, 7, "the M4X3 line");
    assert_eq!(&text[e.primary.span.start as usize..e.primary.span.end as usize], "SV[0]");
    assert!(e.notes.iter().any(|n| n.contains("row 2")), "{:?}", e.notes);
    // Rows inside the declarations are fine.
    let ok =
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL CONST[0][0..3]\n  0: M4X4 OUT[0], IN[0], CONST[0][0]\n  1: END\n";
    assert!(
        tgsi2va::tgsi::check(&tgsi2va::tgsi::parse(ok).unwrap())
            .iter()
            .all(|d| d.severity != tgsi2va::diag::Severity::Error)
    );
}
