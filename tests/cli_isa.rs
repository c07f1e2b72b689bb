//! The `asm`, `disasm` and `isa` commands, run as the built binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tgsi2va(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tgsi2va"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tgsi2va");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin).expect("write stdin");
    }
    child.wait_with_output().expect("wait for tgsi2va")
}

fn vector_lines() -> Vec<(String, String)> {
    include_str!("isa/assembler-cases.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (hex, text) = l.split_once("    ").expect("vector line");
            (hex.to_string(), text.to_string())
        })
        .collect()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tgsi2va-cli-isa-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Assembling the vector texts gives the vector bytes; `disasm --hex` of them prints exactly
/// the vector file (plus Mesa's blank lines after branches and at the end).
#[test]
fn asm_then_disasm_hex_reproduces_the_vectors() {
    let vectors = vector_lines();
    let source: String = vectors.iter().map(|(_, t)| format!("{t}\n")).collect();
    let out = tgsi2va(&["asm", "-"], source.as_bytes());
    assert!(out.status.success(), "asm failed: {}", String::from_utf8_lossy(&out.stderr));
    let expected_bytes: Vec<u8> = vectors
        .iter()
        .flat_map(|(hex, _)| hex.split(' ').map(|b| u8::from_str_radix(b, 16).expect("hex")).collect::<Vec<_>>())
        .collect();
    assert_eq!(out.stdout, expected_bytes);

    let listing = tgsi2va(&["disasm", "--hex", "-"], &out.stdout);
    assert!(listing.status.success());
    let mut expected = String::new();
    for (hex, text) in &vectors {
        expected.push_str(&format!("{hex}    {text}\n"));
        if text.starts_with("BRANCHZ") {
            expected.push('\n');
        }
    }
    expected.push('\n');
    pretty_assertions::assert_eq!(String::from_utf8_lossy(&listing.stdout), expected);

    // The plain listing (three-space indent) assembles again to the same binary.
    let plain = tgsi2va(&["disasm", "-"], &out.stdout);
    let again = tgsi2va(&["asm"], &plain.stdout);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(again.stdout, out.stdout);
}

#[test]
fn disasm_stops_at_zero_word_unless_each() {
    let nop_end: u64 = 0x7800_C000_0000_0000;
    let mov: u64 = 0x0091_C100_0000_0002;
    let mut bytes = Vec::new();
    for w in [mov, 0, nop_end] {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let out = tgsi2va(&["disasm", "-"], &bytes);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "   MOV.i32 r1, r2\n\n");
    let each = tgsi2va(&["disasm", "--each", "-"], &bytes);
    assert_eq!(String::from_utf8_lossy(&each.stdout), "MOV.i32 r1, r2\nNOP \nNOP.end \n");
    let each_hex = tgsi2va(&["disasm", "--each", "--hex", "-"], &bytes);
    assert_eq!(
        String::from_utf8_lossy(&each_hex.stdout),
        "02 00 00 00 00 c1 91 00    MOV.i32 r1, r2\n00 00 00 00 00 00 00 00    NOP \n00 00 00 00 00 c0 00 78    NOP.end \n"
    );
}

#[test]
fn undecodable_words_are_marked_and_exit_1() {
    let unknown: u64 = 0x01FF_0000_0000_0000; // primary opcode 0x1FF does not exist
    let mut bytes = unknown.to_le_bytes().to_vec();
    bytes.extend_from_slice(&0x0091_C100_0000_0002u64.to_le_bytes());
    let out = tgsi2va(&["disasm", "--each", "-"], &bytes);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("<undecodable> ; unknown primary opcode 0x1ff\nMOV.i32 r1, r2\n"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte offset 0x0"));
}

#[test]
fn asm_error_names_line_and_column_and_writes_nothing() {
    let dir = temp_dir("asm-error");
    let input = dir.join("bad.s");
    let output = dir.join("out.bin");
    std::fs::write(&input, "# comment\nMOV.i32 r1, r2\n\nFADD.f32 r0, u0, u4\n").expect("write input");
    let out = tgsi2va(
        &[
            "--message-format",
            "short",
            "asm",
            input.to_str().expect("utf-8 path"),
            "-o",
            output.to_str().expect("utf-8 path"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.s:4:18: error[A0007]"), "{stderr}");
    assert!(!output.exists(), "no partial output file");

    let human = tgsi2va(&["asm", "-"], b"MOV.i32.wait01.wait1 r0, r1\n");
    assert_eq!(human.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(stderr.contains("<stdin>:1:16"), "{stderr}");
    assert!(stderr.contains("^^^^^"), "{stderr}");
}

#[test]
fn every_negative_case_fails_with_line_and_column() {
    let cases = include_str!("isa/negative-cases.txt");
    for line in cases.lines().skip(1).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let out = tgsi2va(&["--message-format", "short", "asm", "-"], format!("{line}\n").as_bytes());
        assert_eq!(out.status.code(), Some(1), "{line}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("<stdin>:1:"), "{line}: {stderr}");
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(tgsi2va(&["disasm", "--bogus"], b"").status.code(), Some(2));
    assert_eq!(tgsi2va(&["isa", "--html", "FADD.f32"], b"").status.code(), Some(2));
}

#[test]
fn isa_lists_and_describes() {
    let list = tgsi2va(&["isa"], b"");
    assert!(list.status.success());
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(text.lines().count(), 253, "header and 252 instructions");
    assert!(text.contains("FADD.f32"));
    let one = tgsi2va(&["isa", "fadd.F32"], b"");
    assert!(one.status.success());
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(text.starts_with("FADD.f32 — "), "{text}");
    assert!(text.contains("clamp (bits 32..33"), "{text}");
    let missing = tgsi2va(&["isa", "FADDX"], b"");
    assert_eq!(missing.status.code(), Some(1));
    let html = tgsi2va(&["isa", "--html"], b"");
    assert!(html.status.success());
    assert!(String::from_utf8_lossy(&html.stdout).starts_with("<!DOCTYPE html>"));
}

/// A single-input command that cannot read its input says so on one line and exits 1 (the
/// shared `batch::failure` path of `asm`, `disasm`, `fmt`, `interp` and `emu`).
#[test]
fn unreadable_inputs_fail_with_one_line() {
    let dir = temp_dir("unreadable");
    let missing = dir.join("missing.file");
    let missing = missing.to_str().expect("UTF-8 temp path");
    for args in [
        vec!["asm", missing],
        vec!["disasm", missing],
        vec!["fmt", missing],
        vec!["interp", missing],
        vec!["emu", missing, "--meta", missing],
    ] {
        let o = tgsi2va(&args, b"");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: ") && stderr.contains("missing.file"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.ends_with('\n'), "{args:?}: {stderr:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
