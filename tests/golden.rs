//! Golden outputs of the compiler: every `tgsi-samples/**/*.tgsi` has its expected result under
//! `tests/golden/` (same relative path, `.tgsi` replaced):
//!
//! * `NAME.txt` — per variant a header (`# main: offset 0, 128 bytes, 16 work registers`), Mesa's
//!   shader-db statistics line, and Mesa's verbose listing (`8 bytes    text` per instruction)
//!   of the emitted code, decoded from the blob;
//! * `NAME.json` — the metadata a driver needs;
//! * `NAME.err` instead of both when the compiler rejects the shader: the rendered diagnostic,
//!   so a change in what we support or how we say it shows up here too.
//!
//! `BLESS=1 cargo test --test golden` rewrites them (and removes files whose sample is gone);
//! review every change with `git diff`. A failure shows the first differing file as a diff.

use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tgsi2va::compile::{Options, compile};
use tgsi2va::diag::{MessageFormat, render as render_diags};
use tgsi2va::valhall::{ListingOptions, listing};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn collect(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// The expected files of one sample: relative golden path → contents.
fn render(sample: &Path, rel: &Path) -> BTreeMap<PathBuf, String> {
    let text = std::fs::read_to_string(sample).unwrap();
    let mut files = BTreeMap::new();
    match compile(&text, &Options::default()) {
        Ok(c) => {
            let mut out = String::new();
            for v in &c.meta.variants {
                let code = &c.blob[v.offset as usize..(v.offset + v.size) as usize];
                writeln!(
                    out,
                    "# {}: offset {}, {} bytes, {} work registers",
                    v.name, v.offset, v.size, v.work_registers
                )
                .unwrap();
                writeln!(out, "# {}", tgsi2va::emit::stats::line(&v.stats)).unwrap();
                out.push_str(&listing(code, ListingOptions { hex: true, ..Default::default() }).text);
            }
            files.insert(rel.with_extension("txt"), out);
            files.insert(rel.with_extension("json"), c.meta.to_json() + "\n");
        }
        Err(diags) => {
            let name = rel.with_extension("tgsi");
            let rendered = render_diags(&diags.0, &name.display().to_string(), &text, MessageFormat::Human, false);
            files.insert(rel.with_extension("err"), rendered);
        }
    }
    files
}

#[test]
fn every_sample_matches_its_golden_output() {
    let samples_dir = root().join("tgsi-samples");
    let golden_dir = root().join("tests/golden");
    let mut samples = Vec::new();
    collect(&samples_dir, "tgsi", &mut samples);
    assert!(samples.len() >= 60, "samples missing in {}", samples_dir.display());

    let mut expected: BTreeMap<PathBuf, String> = BTreeMap::new();
    for sample in &samples {
        let rel = sample.strip_prefix(&samples_dir).unwrap();
        expected.extend(render(sample, rel));
    }
    let mut present = Vec::new();
    if golden_dir.exists() {
        for ext in ["txt", "json", "err"] {
            collect(&golden_dir, ext, &mut present);
        }
    }
    let present: Vec<PathBuf> = present.iter().map(|p| p.strip_prefix(&golden_dir).unwrap().to_path_buf()).collect();

    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        for stale in present.iter().filter(|p| !expected.contains_key(*p)) {
            std::fs::remove_file(golden_dir.join(stale)).unwrap();
        }
        for (rel, text) in &expected {
            let path = golden_dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::write(&path, text).unwrap();
            }
        }
        return;
    }

    let stale: Vec<&PathBuf> = present.iter().filter(|p| !expected.contains_key(*p)).collect();
    assert!(stale.is_empty(), "golden files without a sample (BLESS=1 removes them): {stale:?}");
    let mut differing = Vec::new();
    for (rel, text) in &expected {
        let path = golden_dir.join(rel);
        match std::fs::read_to_string(&path) {
            Ok(old) if old == *text => {}
            Ok(old) => differing.push((rel, Some(old), text)),
            Err(_) => differing.push((rel, None, text)),
        }
    }
    if let Some((rel, old, new)) = differing.first() {
        let names: Vec<String> = differing.iter().map(|d| d.0.display().to_string()).collect();
        eprintln!("{} golden files differ (BLESS=1 rewrites them): {}", differing.len(), names.join(", "));
        match old {
            Some(old) => assert_eq!(old.as_str(), new.as_str(), "{}", rel.display()),
            None => panic!("{} is missing (BLESS=1 creates it):\n{new}", rel.display()),
        }
    }
}
