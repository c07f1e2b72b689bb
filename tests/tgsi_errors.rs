//! Diagnostic snapshots: every `tests/errors/NAME.tgsi` is parsed (and, when it parses,
//! checked); the rendered diagnostics must equal `tests/errors/NAME.stderr` exactly.
//!
//! The format is human (codespan-reporting, no colour) unless the name ends in `_short` or
//! `_json`. File names in the output are relative to the repository. `BLESS=1 cargo test
//! --test tgsi_errors` rewrites the expectations; review every change by eye, they are the
//! specification of our messages.

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use tgsi2va::diag::{MessageFormat, render};
use tgsi2va::tgsi;

fn render_case(name: &str, text: &str) -> String {
    let diags = match tgsi::parse(text) {
        Ok(program) => tgsi::check(&program),
        Err(errors) => errors.0,
    };
    assert!(!diags.is_empty(), "{name} produced no diagnostics");
    let format = if name.ends_with("_short") {
        MessageFormat::Short
    } else if name.ends_with("_json") {
        MessageFormat::Json
    } else {
        MessageFormat::Human
    };
    render(&diags, &format!("tests/errors/{name}.tgsi"), text, format, false)
}

#[test]
fn error_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "tgsi").then(|| path.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    assert!(names.len() >= 30, "expected at least 30 error cases, found {}", names.len());
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.tgsi"))).unwrap();
        let actual = render_case(name, &text);
        let expected_path = dir.join(format!("{name}.stderr"));
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            failures.push((name.clone(), expected, actual));
        }
    }
    if let Some((name, expected, actual)) = failures.first() {
        let others: Vec<&str> = failures.iter().skip(1).map(|f| f.0.as_str()).collect();
        eprintln!("mismatching snapshots: {name} {others:?} (BLESS=1 rewrites them)");
        assert_eq!(actual, expected, "tests/errors/{name}.stderr");
    }
}

#[test]
fn every_code_is_documented() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md")).unwrap();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).unwrap();
            for code in text.match_indices(['E', 'W']).filter_map(|(i, _)| text.get(i..i + 5)) {
                if code[1..].chars().all(|c| c.is_ascii_digit()) {
                    assert!(
                        docs.contains(&format!("`{code}`")),
                        "{code} (used in {}) is not in docs/diagnostics.md",
                        path.display()
                    );
                }
            }
        }
    }
}
