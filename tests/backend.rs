//! Precise-output file tests of the back end (register allocation, flow, encoding, stats).
//!
//! Each `tests/backend/NAME.ir` holds an IR program (the text form of `ir::text`) followed by
//! the line `; ==== expected ====` and the expected result as comments: the variant
//! description, Mesa's shader-db line and the final assembly (as `disasm::print` writes it, one
//! block per paragraph). `BLESS=1 cargo test --test backend` rewrites the expectations. A header
//! comment `; options: no32` disables the 32-register mode, `; options: tls_base=N` sets the
//! caller's scratch size. The allocation checker runs on every test (tests enable it).

use pretty_assertions::StrComparison;
use std::path::Path;
use tgsi2va::emit::blob::{self, Options};
use tgsi2va::emit::stats;
use tgsi2va::ir;

const MARKER: &str = "; ==== expected ====";

fn render(input: &str) -> String {
    let shader = ir::text::parse(input).unwrap_or_else(|e| panic!("bad IR: {e}"));
    if let Err(errors) = ir::verify::verify(&shader) {
        panic!("the test input does not verify:\n{}", errors.join("\n"));
    }
    let mut options = Options::default();
    options.regalloc.check = true;
    for line in input.lines() {
        if let Some(opts) = line.trim().strip_prefix("; options:") {
            for o in opts.split_whitespace() {
                if o == "no32" {
                    options.regalloc.allow_32 = false;
                } else if let Some(n) = o.strip_prefix("tls_base=") {
                    options.regalloc.tls_base = n.parse().expect("tls_base");
                }
            }
        }
    }
    let c = blob::compile_full(&shader, &options).unwrap_or_else(|e| panic!("compile failed: {e}"));
    // Every word must decode back to the instruction.
    for (k, w) in c.code.chunks(8).enumerate() {
        let word = u64::from_le_bytes(w.try_into().unwrap());
        tgsi2va::valhall::decode(word).unwrap_or_else(|e| panic!("word {k} does not decode: {e}"));
    }
    let mut out = String::new();
    let preload: Vec<String> = c.info.preload.iter().map(|r| format!("r{r}")).collect();
    out.push_str(&format!(
        "; work_registers {}, preload [{}], tls {}\n",
        c.info.work_registers,
        preload.join(" "),
        c.info.tls_size
    ));
    out.push_str(&format!("; {}\n", stats::line(&c.info.stats)));
    for b in &c.mach.blocks {
        if b.insts.is_empty() {
            continue;
        }
        out.push_str(";\n");
        for i in &b.insts {
            out.push_str(&format!(";   {}\n", tgsi2va::valhall::print(&i.instr).trim_end()));
        }
    }
    out
}

fn run(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/backend").join(format!("{name}.ir"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (input, expected) = match text.find(MARKER) {
        Some(at) => (&text[..at], text[at + MARKER.len()..].trim_start_matches('\n')),
        None => (text.as_str(), ""),
    };
    let actual = render(input);
    if actual != expected {
        if std::env::var_os("BLESS").is_some() {
            let new = format!("{}{MARKER}\n{actual}", input.trim_end_matches('\n').to_string() + "\n\n");
            std::fs::write(&path, new).unwrap();
            return;
        }
        panic!(
            "{name}: the output differs from the expectation (run with BLESS=1 to accept it):\n{}",
            StrComparison::new(expected, &actual)
        );
    }
}

macro_rules! file_tests {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run(stringify!($name)); } )*
        const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

file_tests!(
    alu,
    constants,
    staging_texture,
    loads_stores,
    pair64,
    fragment_outputs,
    zs_emit,
    preloads,
    loop_phi_cycle,
    if_else,
    waits_varying,
    waits_memory,
    wait_before_reconverge,
    wait_hoisted_before_loop,
    barrier,
    discard_skip,
    spilling,
    mode64,
    empty,
    two_blends,
    pressure40,
    loop_continue,
    empty_if_discard,
);

#[test]
fn every_file_is_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/backend");
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "ir") {
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            assert!(NAMES.contains(&stem.as_str()), "tests/backend/{stem}.ir is not listed in tests/backend.rs");
        }
    }
}
