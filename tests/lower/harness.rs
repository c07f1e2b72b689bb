//! Shared by the lowering tests (`#[path]`-included): lowering a TGSI text to verified IR, and the
//! precise-output case files (`=== name`, the TGSI text, `---`, the IR it lowers to; blank lines
//! separate cases). `BLESS=1` rewrites the IR parts.

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use tgsi2va::ir::text::print;
use tgsi2va::lower::{Lowered, Options};

/// Lowers `text`, which must parse and lower; the IR must pass the verifier.
pub fn lower(text: &str) -> Lowered {
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|d| panic!("parse: {:?}\n{text}", d.0));
    let lowered = tgsi2va::lower::lower(&program, &Options::default())
        .unwrap_or_else(|d| panic!("lower: {:?}\n{text}", d.0.iter().map(|d| &d.message).collect::<Vec<_>>()));
    if let Err(errors) = tgsi2va::ir::verify::verify(&lowered.shader) {
        panic!("invalid IR for\n{text}\n{}\n{}", errors.join("\n"), print(&lowered.shader));
    }
    lowered
}

struct Case {
    name: String,
    tgsi: String,
    expected: String,
}

/// The header comment and the cases of a case file.
fn parse_cases(text: &str) -> (String, Vec<Case>) {
    let mut header = String::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut in_expected = false;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("=== ") {
            cases.push(Case { name: name.to_string(), tgsi: String::new(), expected: String::new() });
            in_expected = false;
        } else if line == "---" && !cases.is_empty() {
            in_expected = true;
        } else if let Some(case) = cases.last_mut() {
            if line.is_empty() {
                continue;
            }
            let part = if in_expected { &mut case.expected } else { &mut case.tgsi };
            part.push_str(line);
            part.push('\n');
        } else {
            header.push_str(line);
            header.push('\n');
        }
    }
    (header, cases)
}

/// Checks (or with `BLESS=1` rewrites) the expectations of `tests/lower/{dir}/{file}`.
pub fn expectations(dir: &str, file: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lower").join(dir).join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let (header, cases) = parse_cases(&text);
    // One blank line between the header comment and the cases, however often it is blessed.
    let mut out = format!("{}\n", header.trim_end());
    let mut failures = Vec::new();
    for case in &cases {
        let actual = print(&lower(&case.tgsi).shader);
        if actual != case.expected {
            failures.push((case.name.clone(), case.expected.clone(), actual.clone()));
        }
        out += &format!("\n=== {}\n{}---\n{}", case.name, case.tgsi, actual);
    }
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, out).unwrap();
        return;
    }
    if let Some((name, expected, actual)) = failures.first() {
        eprintln!("{} of {} cases differ in {file} (BLESS=1 rewrites them)", failures.len(), cases.len());
        assert_eq!(expected, actual, "case `{name}` in {file}");
    }
    assert!(!cases.is_empty());
}
