//! Constant folding against the emulator: the same TGSI operation runs once on operands read
//! from a constant buffer at run time (nothing to fold) and once on the same bit patterns as
//! immediates (folded by `opt::const_fold`); every output bit must agree. This checks the fold
//! end to end: the folded value, and how legalisation encodes constant sources with swizzles,
//! modifiers and 16-bit lanes.

use proptest::prelude::*;
use tgsi2va::exec::io::{Inputs, RegKey};

/// (opcode, number of sources, takes float source modifiers).
const OPS: &[(&str, usize, bool)] = &[
    ("ADD", 2, true),
    ("ADD_SAT", 2, true),
    ("MUL", 2, true),
    ("MUL_SAT", 2, true),
    ("MAD", 3, true),
    ("MIN", 2, true),
    ("MAX", 2, true),
    ("FRC", 1, true),
    ("FLR", 1, true),
    ("CEIL", 1, true),
    ("TRUNC", 1, true),
    ("ROUND", 1, true),
    ("RCP", 1, true),
    ("RSQ", 1, true),
    ("SQRT", 1, true),
    ("EX2", 1, true),
    ("LG2", 1, true),
    ("DP3", 2, true),
    ("SLT", 2, true),
    ("SGE", 2, true),
    ("CMP", 3, true),
    ("LRP", 3, true),
    ("SSG", 1, true),
    ("FSEQ", 2, true),
    ("FSLT", 2, true),
    ("FSNE", 2, true),
    ("F2I", 1, true),
    ("F2U", 1, true),
    ("I2F", 1, false),
    ("U2F", 1, false),
    ("UADD", 2, false),
    ("UMUL", 2, false),
    ("UMAD", 3, false),
    ("IMAX", 2, false),
    ("UMIN", 2, false),
    ("SHL", 2, false),
    ("ISHR", 2, false),
    ("USHR", 2, false),
    ("AND", 2, false),
    ("OR", 2, false),
    ("XOR", 2, false),
    ("NOT", 1, false),
    ("INEG", 1, false),
    ("IABS", 1, false),
    ("ISSG", 1, false),
    ("USEQ", 2, false),
    ("ISLT", 2, false),
    ("USGE", 2, false),
    ("UCMP", 3, false),
    ("UMUL_HI", 2, false),
    ("IMUL_HI", 2, false),
    ("IBFE", 3, false),
    ("UBFE", 3, false),
    ("BFI", 4, false),
    ("BREV", 1, false),
    ("POPC", 1, false),
    ("LSB", 1, false),
    ("UMSB", 1, false),
    ("PK2H", 1, true),
    ("UP2H", 1, false),
];

/// Interesting bit patterns: signed zeros, one, infinities, NaNs, denormals, halves, integers.
const SPECIAL: &[u32] = &[
    0,
    0x8000_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x7F80_0001,
    0x0000_0001,
    0x807F_FFFF,
    0x3F00_0000,
    0x4B00_0001,
    0x3C00_BC00,
    0x7C00_0001,
    1,
    31,
    32,
    0xFFFF_FFFF,
    0x8000_0001,
    0x7FFF_FFFF,
];

fn program(op: &str, sources: &[String]) -> String {
    let mut t = String::from("FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0..3]\nDCL TEMP[0]\n");
    if sources.iter().any(|s| s.contains("IMM")) {
        t += "IMM[0] UINT32 {IMM0}\nIMM[1] UINT32 {IMM1}\nIMM[2] UINT32 {IMM2}\nIMM[3] UINT32 {IMM3}\n";
    }
    t += &format!("  0: {op} TEMP[0], {}\n  1: MOV OUT[0], TEMP[0]\n  2: END\n", sources.join(", "));
    t
}

/// Runs `text` in the emulator (constant buffer from `words`) and returns OUT[0] of lane 0.
fn run(text: &str, words: &[[u32; 4]; 4]) -> Result<[u32; 4], String> {
    let options = tgsi2va::compile::Options { contract: false, ..Default::default() };
    let compiled = tgsi2va::compile::compile(text, &options).map_err(|d| format!("{:?}", d.0))?;
    let mut json = String::from("{");
    for (n, c) in words.iter().enumerate() {
        if n > 0 {
            json.push(',');
        }
        json += &format!("\"CONST[0][{n}]\": [\"{:#x}\", \"{:#x}\", \"{:#x}\", \"{:#x}\"]", c[0], c[1], c[2], c[3]);
    }
    json.push('}');
    let inputs = Inputs::from_json(&json).map_err(|e| e.to_string())?;
    let out = tgsi2va::emu::run(&compiled.blob, &compiled.meta, &inputs).map_err(|e| e.to_string())?;
    Ok(out.outputs[&RegKey::parse("OUT[0]").unwrap()][0])
}

/// The folded and the run-time program for one operation, sources and operand words.
fn pair(op: &str, mods: &[&str], swizzles: &[&str], words: &[[u32; 4]; 4]) -> (String, String) {
    let source = |k: usize, file: &str| {
        let m = mods[k];
        let close = if m.ends_with('|') { "|" } else { "" };
        format!("{m}{file}[{k}].{}{close}", swizzles[k])
    };
    let n = mods.len();
    let runtime = program(op, &(0..n).map(|k| source(k, "CONST[0]")).collect::<Vec<_>>());
    let mut folded = program(op, &(0..n).map(|k| source(k, "IMM")).collect::<Vec<_>>());
    for (k, w) in words.iter().enumerate() {
        folded = folded.replace(&format!("{{IMM{k}}}"), &format!("{{{}, {}, {}, {}}}", w[0], w[1], w[2], w[3]));
    }
    (folded, runtime)
}

fn check(op: &str, mods: &[&str], swizzles: &[&str], words: &[[u32; 4]; 4]) -> Result<(), String> {
    let (folded, runtime) = pair(op, mods, swizzles, words);
    let a = run(&runtime, words)?;
    let b = run(&folded, words)?;
    // One freedom: a sign change of a signalling-NaN constant folds to the flipped bits, where
    // the hardware's arithmetic negation would also quiet it. TGSI leaves NaN bits unspecified
    // (verify takes any NaN for any NaN); everything else must be bit-exact.
    let quiet = |w: u32| if f32::from_bits(w).is_nan() { w | 0x0040_0000 } else { w };
    if a.iter().map(|&w| quiet(w)).ne(b.iter().map(|&w| quiet(w))) {
        return Err(format!("run time {a:08x?}, folded {b:08x?}\n{folded}"));
    }
    Ok(())
}

/// Every listed operation compiles and folds at least partly (the folded program is shorter).
#[test]
fn every_operation_compiles_and_folds() {
    let words = [[0x3FC0_0000, 2, 0xC0A0_0000, 7]; 4];
    for &(op, n, _) in OPS {
        let mods = vec![""; n];
        let swizzles = vec!["xyzw"; n];
        let (folded, runtime) = pair(op, &mods, &swizzles, &words);
        let options = tgsi2va::compile::Options {
            contract: false,
            print_after: vec!["optimize".to_string()],
            ..Default::default()
        };
        // Machine instructions after the optimiser (copies and preloads are not).
        let size = |text: &str| {
            let c = tgsi2va::compile::compile_to_ir(text, &options).unwrap_or_else(|d| panic!("{op}: {:?}", d.0));
            let ir = &c.dumps[0].1;
            ir.lines()
                .filter(|l| {
                    let inst = l.trim().rsplit(" = ").next().unwrap_or("");
                    inst.starts_with(|c: char| c.is_ascii_uppercase())
                })
                .count()
        };
        assert!(size(&folded) < size(&runtime), "{op} did not fold:\n{folded}");
        check(op, &mods, &swizzles, &words).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}

fn word() -> impl Strategy<Value = u32> {
    prop_oneof![prop::sample::select(SPECIAL), any::<u32>(), (-40i32..40).prop_map(|i| (i as f32).to_bits())]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn folded_and_run_time_results_agree(
        op in 0..OPS.len(),
        words in prop::array::uniform4(prop::array::uniform4(word())),
        mods in prop::array::uniform4(prop::sample::select(&["", "-", "|", "-|"][..])),
        swizzles in prop::array::uniform4(prop::sample::select(&["xyzw", "xxxx", "wzyx", "yxwz", "zzyy"][..])),
    ) {
        let (name, n, float) = OPS[op];
        let mods: Vec<&str> = (0..n).map(|k| if float { mods[k] } else { "" }).collect();
        check(name, &mods, &swizzles[..n], &words).map_err(TestCaseError::fail)?;
    }
}
