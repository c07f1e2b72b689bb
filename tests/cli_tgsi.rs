//! The `check` and `fmt` commands, run as a user would: exit codes, output, files.

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GOOD: &str = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IN[0]\n  1: END\n";
const BAD: &str = "FRAG\nDCL TEMP[0]\n  0: MOVE TEMP[0], TEMP[0]\n";
const WARN: &str = "FRAG\nDCL TEMP[0]\nDCL TEMP[1]\n  0: MOV TEMP[0], TEMP[0]\n  1: END\n";

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgsi2va")).args(args).current_dir(cwd).output().expect("runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tgsi2va-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn check_passes_valid_input() {
    let dir = scratch("valid");
    write(&dir, "good.tgsi", GOOD);
    let o = run(&["check", "good.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "1 passed, 0 failed\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn check_rejects_invalid_input_with_diagnostics() {
    let dir = scratch("invalid");
    write(&dir, "bad.tgsi", BAD);
    let o = run(&["--color", "never", "check", "bad.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "0 passed, 1 failed\n");
    assert_eq!(
        stderr(&o),
        "error[E0003]: unknown opcode `MOVE`\n  ┌─ bad.tgsi:3:6\n  │\n3 │   0: MOVE TEMP[0], TEMP[0]\n  │      ^^^^ not a TGSI opcode\n  │\n  = help: did you mean `MOV`?\n\n"
    );
}

#[test]
fn check_usage_errors_exit_2() {
    let dir = scratch("usage");
    assert_eq!(run(&["check"], &dir).status.code(), Some(2));
    assert_eq!(run(&["check", "--no-such-flag", "x.tgsi"], &dir).status.code(), Some(2));
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let o = run(&["check", "empty"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no *.tgsi files found"), "{}", stderr(&o));
    assert_eq!(run(&["--message-format", "xml", "check", "a.tgsi"], &dir).status.code(), Some(2));
}

#[test]
fn check_recurses_and_reports_in_input_order() {
    let dir = scratch("tree");
    write(&dir, "shaders/a.tgsi", GOOD);
    write(&dir, "shaders/b/c.tgsi", BAD);
    write(&dir, "shaders/b/d.tgsi", GOOD);
    write(&dir, "shaders/e.tgsi", &BAD.replace("MOVE", "ADDD"));
    write(&dir, "shaders/notes.txt", "not a shader");
    let o = run(&["--message-format", "short", "check", "shaders"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "2 passed, 2 failed\n");
    assert_eq!(
        stderr(&o),
        "shaders/b/c.tgsi:3:6: error[E0003]: unknown opcode `MOVE`\nshaders/e.tgsi:3:6: error[E0003]: unknown opcode `ADDD`\n"
    );
    // Files and directories mixed, in the order given.
    let o = run(&["--message-format", "short", "check", "shaders/e.tgsi", "shaders/b"], &dir);
    assert_eq!(stdout(&o), "1 passed, 2 failed\n");
    assert_eq!(
        stderr(&o),
        "shaders/e.tgsi:3:6: error[E0003]: unknown opcode `ADDD`\nshaders/b/c.tgsi:3:6: error[E0003]: unknown opcode `MOVE`\n"
    );
}

#[test]
fn check_json_messages() {
    let dir = scratch("json");
    write(&dir, "bad.tgsi", BAD);
    let o = run(&["--message-format", "json", "check", "bad.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let line = stderr(&o);
    let value: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(value["code"], "E0003");
    assert_eq!(value["file"], "bad.tgsi");
    assert_eq!((value["line"].as_u64(), value["column"].as_u64()), (Some(3), Some(6)));
    assert_eq!(value["notes"][0], "help: did you mean `MOV`?");
}

#[test]
fn warnings_pass_unless_denied() {
    let dir = scratch("warn");
    write(&dir, "w.tgsi", WARN);
    let o = run(&["--message-format", "short", "check", "w.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stderr(&o), "w.tgsi:3:1: warning[W0100]: TEMP[1] is declared but never used\n");
    let o = run(&["--message-format", "short", "check", "--deny-warnings", "w.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "0 passed, 1 failed\n");
}

#[test]
fn check_reads_standard_input() {
    let dir = scratch("stdin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgsi2va"))
        .args(["--message-format", "short", "check", "-"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), BAD.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "<stdin>:3:6: error[E0003]: unknown opcode `MOVE`\n");
}

#[test]
fn fmt_prints_canonical_text() {
    let dir = scratch("fmt");
    write(
        &dir,
        "in.tgsi",
        "frag\ndcl temp[0]\nmov_sat temp[0] , - temp [ 0 ] . wzyx\nimm[0] flt32 {1, 0x3f800000, -0.5, 2}\nend\n",
    );
    let o = run(&["fmt", "in.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "FRAG\nDCL TEMP[0]\n  0: MOV_SAT TEMP[0], -TEMP[0].wzyx\nIMM[0] FLT32 {    1.0000,     1.0000,    -0.5000,     2.0000}\n  1: END\n"
    );
    let o = run(&["fmt", "--float-hex", "in.tgsi", "-o", "out.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
    let written = std::fs::read_to_string(dir.join("out.tgsi")).unwrap();
    assert!(written.contains("IMM[0] FLT32 {0x3f800000, 0x3f800000, 0xbf000000, 0x40000000}\n"), "{written}");
}

#[test]
fn failing_fmt_leaves_no_file() {
    let dir = scratch("fmt-fail");
    write(&dir, "bad.tgsi", BAD);
    let o = run(&["--color", "never", "fmt", "bad.tgsi", "-o", "out.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("error[E0003]"), "{}", stderr(&o));
    assert!(!dir.join("out.tgsi").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    let o = run(&["fmt", "missing.tgsi", "-o", "out.tgsi"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(!dir.join("out.tgsi").exists());
}
