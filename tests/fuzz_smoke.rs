//! A short smoke run of the cargo-fuzz targets (`fuzz/`) under plain `cargo test`: the same
//! check functions (`tests/common/fuzz_checks.rs`, which the fuzz targets include) on a fixed
//! corpus — every TGSI sample and fixture, the ISA test vectors, compiled sample blobs — and on
//! proptest-generated inputs (byte mutations of the corpus, random words, random TGSI programs).
//! `PROPTEST_CASES=N` sets the number of generated inputs per property (default 1000).

mod common;

use common::fuzz_checks as check;
use common::tgsi_gen;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Every TGSI text of the repository (samples, fixtures, diagnostics cases, regression cases).
fn tgsi_corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut paths = Vec::new();
        for dir in ["tgsi-samples", "tests/tgsi", "tests/errors", "tests/diff_cases"] {
            files_with(&root().join(dir), "tgsi", &mut paths);
        }
        paths.sort();
        paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
    })
}

/// The instruction texts of the ISA vectors (`BYTES    TEXT` lines and negative cases).
fn asm_corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut lines = Vec::new();
        for name in ["assembler-cases.txt", "own-cases.txt", "negative-cases.txt"] {
            let text = std::fs::read_to_string(root().join("tests/isa").join(name)).expect("ISA vectors");
            for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
                // Vector lines start with eight hex bytes (24 characters, then spaces).
                let is_vector = line.len() > 27
                    && line.as_bytes()[2] == b' '
                    && line[..23].bytes().all(|b| b == b' ' || b.is_ascii_hexdigit());
                lines.push(if is_vector { line[23..].trim().to_string() } else { line.to_string() });
            }
        }
        lines
    })
}

/// The words of the ISA vectors.
fn word_corpus() -> Vec<u64> {
    let mut words = Vec::new();
    for name in ["assembler-cases.txt", "own-cases.txt"] {
        let text = std::fs::read_to_string(root().join("tests/isa").join(name)).expect("ISA vectors");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let bytes: Option<Vec<u8>> =
                line.get(..23).map(|h| h.split(' ').filter_map(|b| u8::from_str_radix(b, 16).ok()).collect());
            if let Some(b) = bytes.filter(|b| b.len() == 8) {
                words.push(u64::from_le_bytes(b.try_into().expect("8 bytes")));
            }
        }
    }
    words
}

#[test]
fn tgsi_parse_corpus() {
    for text in tgsi_corpus() {
        check::tgsi_parse(text.as_bytes());
    }
}

#[test]
fn valhall_asm_corpus() {
    let lines = asm_corpus();
    assert!(lines.len() > 400, "{}", lines.len());
    for line in lines {
        check::valhall_asm(line.as_bytes());
    }
    check::valhall_asm(lines.join("\n").as_bytes());
}

#[test]
fn valhall_decode_corpus() {
    let words = word_corpus();
    assert!(words.len() > 400, "{}", words.len());
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    check::valhall_decode(&bytes);
}

#[test]
fn compile_corpus() {
    for text in tgsi_corpus() {
        check::compile(text.as_bytes());
    }
}

/// Replaces `len` bytes at `at` (both reduced modulo the input) with `junk`.
fn mutate(base: &[u8], at: usize, len: usize, junk: &[u8]) -> Vec<u8> {
    let at = if base.is_empty() { 0 } else { at % (base.len() + 1) };
    let end = (at + len % 8).min(base.len());
    let mut out = base[..at].to_vec();
    out.extend_from_slice(junk);
    out.extend_from_slice(&base[end..]);
    out
}

/// Deterministic unless `PROPTEST_RNG_SEED` picks another seed (CI runs the same inputs).
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x6675_7a7a);
    ProptestConfig { cases, rng_seed: proptest::test_runner::RngSeed::Fixed(seed), ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tgsi_parse_mutations(k in any::<usize>(), at in any::<usize>(), len in any::<usize>(),
                            junk in prop::collection::vec(any::<u8>(), 0..8)) {
        let corpus = tgsi_corpus();
        check::tgsi_parse(&mutate(corpus[k % corpus.len()].as_bytes(), at, len, &junk));
    }

    #[test]
    fn valhall_asm_mutations(k in any::<usize>(), at in any::<usize>(), len in any::<usize>(),
                             junk in "[ -~]{0,6}") {
        let corpus = asm_corpus();
        check::valhall_asm(&mutate(corpus[k % corpus.len()].as_bytes(), at, len, junk.as_bytes()));
    }

    #[test]
    fn valhall_decode_random(words in prop::collection::vec(any::<u64>(), 1..16), k in any::<usize>(), flip in any::<u64>()) {
        // Random words, plus a known-valid word with random bits flipped.
        let corpus = word_corpus();
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend_from_slice(&(corpus[k % corpus.len()] ^ (flip & flip >> 7)).to_le_bytes());
        check::valhall_decode(&bytes);
    }

    #[test]
    fn compile_mutations(k in any::<usize>(), at in any::<usize>(), len in any::<usize>(),
                         junk in prop::collection::vec(any::<u8>(), 0..8)) {
        let corpus = tgsi_corpus();
        check::compile(&mutate(corpus[k % corpus.len()].as_bytes(), at, len, &junk));
    }

    #[test]
    fn compile_random_programs(case in tgsi_gen::any_case(24)) {
        check::compile(tgsi_gen::render(&case).as_bytes());
    }
}
