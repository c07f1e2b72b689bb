//! Every sample in `tgsi-samples/` runs on seeded inputs, except the documented unsupported
//! ones, which fail with an error naming the construct.

use std::path::{Path, PathBuf};
use tgsi2va::interp::{self, InterpError};

#[path = "common/files.rs"]
mod files;
use files::collect_tgsi;

fn samples() -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect_tgsi(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples"), &mut out);
    out
}

/// Samples that use constructs the interpreter documents as unsupported, with the word the
/// error must name.
const UNSUPPORTED: [(&str, &str); 1] = [("legacy/vs-integer-ops.tgsi", "CALLNZ")];

#[test]
fn all_samples_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples");
    let mut ran = 0;
    for path in samples() {
        let name = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap();
        let program = tgsi2va::tgsi::parse(&text).unwrap();
        let expected_error = UNSUPPORTED.iter().find(|(n, _)| *n == name).map(|(_, word)| *word);
        for seed in 0..4 {
            let inputs = interp::inputs::generate(&program, seed);
            match (interp::run(&program, &inputs), expected_error) {
                (Ok(run), None) => {
                    assert!(run.steps > 0, "{name}");
                    // Deterministic: the same inputs give the same outputs.
                    assert_eq!(interp::run(&program, &inputs).unwrap().outputs, run.outputs, "{name}");
                    ran += 1;
                }
                (Err(e), Some(word)) => {
                    assert!(matches!(e, InterpError::Unsupported { .. }), "{name}: {e}");
                    assert!(e.to_string().contains(word), "{name}: {e}");
                }
                (Err(e), None) => panic!("{name} (seed {seed}): {e}"),
                (Ok(_), Some(_)) => panic!("{name} is listed as unsupported but runs"),
            }
        }
    }
    assert!(ran >= 4 * 80, "only {ran} runs");
}

#[test]
fn generated_inputs_are_deterministic_and_sensible() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples/cs/system-values.tgsi"))
            .unwrap();
    let program = tgsi2va::tgsi::parse(&text).unwrap();
    assert_eq!(interp::inputs::generate(&program, 5), interp::inputs::generate(&program, 5));
    assert_ne!(interp::inputs::generate(&program, 5), interp::inputs::generate(&program, 6));
}

/// Generated inputs follow the semantics' fixed parts: a point-sprite coordinate is
/// (s, t, 0, 1) in every lane (tgsi.rst), whatever the seed.
#[test]
fn generated_point_coordinates_are_s_t_0_1() {
    let program =
        tgsi2va::tgsi::parse("FRAG\nDCL IN[0], PCOORD, LINEAR\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IN[0]\n  1: END\n")
            .unwrap();
    let key = tgsi2va::exec::io::RegKey::parse("IN[0]").unwrap();
    for seed in 0..8 {
        let inputs = interp::inputs::generate(&program, seed);
        for lane in inputs.registers[&key] {
            assert_eq!([lane[2], lane[3]], [0f32.to_bits(), 1f32.to_bits()], "seed {seed}");
        }
    }
}
