//! `tgsi2va interp` run as a user would: exact output JSON, exit codes, error rendering.

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgsi2va")).args(args).current_dir(cwd).output().expect("runs")
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tgsi2va-interp-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn sample_with_inputs_file_prints_exact_json() {
    let dir = scratch("sample");
    std::fs::write(
        dir.join("in.json"),
        r#"{"IN[0]": [[1, 2, 3, 4], [0.5, 0.5, 0.5, 1], [0, 0, 0, 1], [-1, -2, -3, -4]],
            "CONST[0][0]": [2, 0, 0, 0], "CONST[0][1]": [0, 2, 0, 0], "CONST[0][2]": [0, 0, 2, 0], "CONST[0][3]": [0, 0, 0, 1]}"#,
    )
    .unwrap();
    let sample = samples().join("realistic/ui.vert.tgsi");
    let o = run(&["interp", sample.to_str().unwrap(), "--inputs", "in.json"], &dir);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    assert_eq!(o.status.code(), Some(0));
    let expected =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interp/ui.vert.json")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected);
}

#[test]
fn errors_and_exit_codes() {
    let dir = scratch("errors");
    std::fs::write(dir.join("bad.tgsi"), "VERT\nDCL TEMP[0]\n  0: MOVE TEMP[0], TEMP[0]\n").unwrap();
    let o = run(&["--color", "never", "interp", "bad.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[E0003]: unknown opcode `MOVE`"));
    std::fs::write(
        dir.join("noise.tgsi"),
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: NOISE1 OUT[0], IN[0]\n  1: END\n",
    )
    .unwrap();
    let o = run(&["--color", "never", "--message-format", "short", "interp", "noise.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "noise.tgsi:4:6: error[E0400]: `NOISE1` was never specified or implemented (GLSL noise)\n"
    );
    let o = run(&["interp", "noise.tgsi", "--inputs", "missing.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(dir.join("bad.json"), r#"{"IN[0]": [1, 2]}"#).unwrap();
    let o = run(&["interp", "noise.tgsi", "--inputs", "bad.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("IN[0]"));
    let o = run(&["interp"], &dir);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn seeded_inputs_are_deterministic() {
    let dir = scratch("seed");
    let sample = samples().join("fs/float-arith.tgsi");
    let a = run(&["interp", sample.to_str().unwrap(), "--seed", "7"], &dir);
    let b = run(&["interp", sample.to_str().unwrap(), "--seed", "7"], &dir);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn accuracy_flag_says_how_each_value_compares() {
    let dir = scratch("accuracy");
    std::fs::write(
        dir.join("rcp.tgsi"),
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n  0: RCP TEMP[0].x, IN[0].xxxx\n  \
         1: MOV TEMP[0].yzw, IN[0]\n  2: MOV OUT[0], TEMP[0]\n  3: END\n",
    )
    .unwrap();
    std::fs::write(dir.join("in.json"), r#"{"IN[0]": [2.0, 3.0, 4.0, 5.0]}"#).unwrap();
    let plain = run(&["interp", "rcp.tgsi", "--inputs", "in.json"], &dir);
    let with = run(&["interp", "rcp.tgsi", "--inputs", "in.json", "--accuracy"], &dir);
    assert_eq!(with.status.code(), Some(0));
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    let with: serde_json::Value = serde_json::from_slice(&with.stdout).unwrap();
    // The same outputs, plus the accuracy: RCP within its bound (1.5 ulp of 0.5), moves exact.
    assert_eq!(with["outputs"], plain["outputs"]);
    assert_eq!(
        with["outputs"]["OUT[0]"][2],
        serde_json::json!(["0x3f000000", "0x40400000", "0x40800000", "0x40a00000"])
    );
    for lane in 0..4 {
        let a = &with["accuracy"]["OUT[0]"][lane];
        assert_eq!(a[1], "exact");
        assert_eq!(a[3], "exact");
        let bound = a[0].as_f64().expect("a numeric bound for RCP");
        assert!(bound > 0.0 && bound < 1e-6, "{bound}");
    }
    assert_eq!(with["uncertain_lanes"], serde_json::json!([]));
    assert!(plain.get("accuracy").is_none());
}

#[test]
fn saved_inputs_replay_the_seeded_run() {
    let dir = scratch("save-inputs");
    let sample = samples().join("fs/float-arith.tgsi");
    let seeded = run(&["interp", sample.to_str().unwrap(), "--seed", "3", "--save-inputs", "in.json"], &dir);
    assert_eq!(seeded.status.code(), Some(0));
    let saved = std::fs::read_to_string(dir.join("in.json")).unwrap();
    assert!(saved.contains("\"IN[0]\""), "{saved}");
    let replayed = run(&["interp", sample.to_str().unwrap(), "--inputs", "in.json"], &dir);
    assert_eq!(replayed.status.code(), Some(0));
    assert_eq!(seeded.stdout, replayed.stdout);
    let other_seed = run(&["interp", sample.to_str().unwrap(), "--seed", "4"], &dir);
    assert_ne!(seeded.stdout, other_seed.stdout);
}

#[test]
fn verify_reports_an_interpreter_step_limit_as_inconclusive() {
    let dir = scratch("inconclusive");
    let endless =
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: BGNLOOP\n  2: ENDLOOP\n  3: END\n";
    std::fs::write(dir.join("endless.tgsi"), endless).unwrap();
    let o = run(&["verify", "endless.tgsi", "--seeds", "2"], &dir);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0 passed, 0 failed, 1 inconclusive\n");
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "endless.tgsi: seed 1: inconclusive: the interpreter executed 1000000 instructions without reaching END (its \
         step limit)\n"
    );
    // A failure elsewhere still fails the run.
    std::fs::write(dir.join("bad.tgsi"), "VERT\n  0: NOT_AN_OPCODE\n").unwrap();
    let o = run(&["verify", "endless.tgsi", "bad.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0 passed, 1 failed, 1 inconclusive\n");
}
