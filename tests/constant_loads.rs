//! Constants past the push table: a long straight-line shader reading many `CONST` vec4s, each
//! in a few nearby statements, loads each one next to its readers (`opt::sink`), so it needs no
//! more registers than a short one and spills nothing, and it still computes what the TGSI
//! interpreter computes.

use tgsi2va::compile::{Options, compile};
use tgsi2va::verify::{self, verify};

/// A fragment shader summing `n` constant vec4s (`CONST[0][0..n]`) into a colour, two
/// constants per statement group, with an `IF` reading one of them in the middle.
fn many_constants(n: usize) -> String {
    let mut text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL CONST[0][0..{}]\nDCL TEMP[0..2]\n",
        n - 1
    );
    text.push_str("  0: MOV TEMP[0], IN[0]\n");
    let mut pc = 1;
    for c in 0..n {
        text.push_str(&format!("{pc:3}: MAD TEMP[0], TEMP[0], CONST[0][{c}], CONST[0][{}]\n", (c + 1) % n));
        pc += 1;
        if c == n / 2 {
            text.push_str(&format!("{pc:3}: IF TEMP[0].xxxx\n"));
            text.push_str(&format!("{:3}:   ADD TEMP[0], TEMP[0], CONST[0][{c}].wzyx\n", pc + 1));
            text.push_str(&format!("{:3}: ENDIF\n", pc + 2));
            pc += 3;
        }
    }
    text.push_str(&format!("{pc:3}: MOV OUT[0], TEMP[0]\n{:3}: END\n", pc + 1));
    text
}

#[test]
fn many_constants_past_the_push_table_spill_nothing() {
    let text = many_constants(96);
    let compiled = compile(&text, &Options::default()).expect("compiles");
    let stats = &compiled.meta.variants[0].stats;
    assert!(compiled.meta.ubos.contains(&0), "the constants are read from the UBO");
    assert_eq!((stats.spills, stats.fills), (0, 0), "{stats:?}");
    let report = verify(&text, &verify::Options::default()).expect("runs");
    assert!(report.passed() && report.compared > 0, "{:?}", report.mismatches);
}

/// A long run of `IF`s (a deep dominator tree), each reading its own constant and one shared
/// by all: each load moves next to its readers, so nothing spills (928 values spill without
/// `opt::sink`).
#[test]
fn constants_read_under_a_long_run_of_ifs() {
    let n = 120;
    let mut text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL CONST[0][0..{n}]\nDCL TEMP[0..1]\n  0: MOV TEMP[0], IN[0]\n"
    );
    let mut pc = 1;
    for c in 0..n {
        text.push_str(&format!(
            "{pc:3}: IF TEMP[0].xxxx\n{:3}:   MAD TEMP[0], TEMP[0], CONST[0][{c}], CONST[0][{n}]\n{:3}: ENDIF\n",
            pc + 1,
            pc + 2
        ));
        pc += 3;
    }
    text.push_str(&format!("{pc:3}: MOV OUT[0], TEMP[0]\n{:3}: END\n", pc + 1));
    let compiled = compile(&text, &Options::default()).expect("compiles");
    let stats = &compiled.meta.variants[0].stats;
    assert_eq!((stats.spills, stats.fills), (0, 0), "{stats:?}");
    let report = verify(&text, &verify::Options::default()).expect("runs");
    assert!(report.passed() && report.compared > 0, "{:?}", report.mismatches);
}
