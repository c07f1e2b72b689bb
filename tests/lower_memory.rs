//! Lowering of the memory opcodes (LOAD, STORE, ATOM*, RESQ, IMG2HND, SAMP2HND), precise-output
//! style.
//!
//! Each case is `tests/lower/memory/NAME.tgsi`. A shader that lowers is compared with
//! `NAME.ir`: the memory-related metadata (`ssbos`, `images`, `ubos`, `wls_size`, push words)
//! as `;` comment lines, then the IR exactly as `ir::text::print` writes it; the IR must also
//! pass `ir::verify::verify` and parse back from its text. A shader the lowering rejects is compared with `NAME.err`, the
//! rendered diagnostics. `BLESS=1 cargo test --test lower_memory` rewrites the expectations
//! (review every change by hand).

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use tgsi2va::diag::{MessageFormat, render};
use tgsi2va::emit::meta::{FauSource, Metadata};
use tgsi2va::ir::{Operand, Shader};
use tgsi2va::valhall::{Base, Dest, Staging, decode, encode};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lower/memory")
}

/// The metadata fields the memory lowering fills, as comment lines.
fn meta_lines(meta: &Metadata) -> String {
    let mut out = String::new();
    out.push_str(&format!("; ssbos: {:?}\n", meta.ssbos));
    out.push_str(&format!("; images: {:?}\n", meta.images));
    out.push_str(&format!("; ubos: {:?}\n", meta.ubos));
    out.push_str(&format!("; wls_size: {}\n", meta.wls_size));
    for w in &meta.fau {
        let what = match &w.source {
            FauSource::Constant { buffer, index, component } => format!("CONST[{buffer}][{index}].{component}"),
            FauSource::Sysval { name, component } => format!("sysval {name}.{component}"),
            FauSource::Literal { value } => format!("literal {value:#x}"),
        };
        out.push_str(&format!("; u{}: {what}\n", w.word));
    }
    out
}

/// Every machine instruction of the shader encodes once its operands get registers: a stand-in
/// assignment gives each staging list and 64-bit pair its own even-aligned registers and each
/// constant an immediate-table entry, then `encode` must accept it and `decode` give it back.
/// This checks the opcode, modifiers, immediates and staging counts the lowering chose.
fn check_encodable(name: &str, shader: &Shader) {
    for block in &shader.blocks {
        for &id in &block.insts {
            let inst = shader.inst(id);
            if !inst.is_machine() || inst.dead {
                continue;
            }
            let mut mach = inst.mach.instr();
            let info = mach.info();
            let mut next = 0u8;
            let mut take = |n: u8| {
                let base = next;
                next += n.max(1).next_multiple_of(2);
                base
            };
            for k in 0..info.staging.len() {
                let count = inst.staging[k].len() as u8;
                mach.staging[k] = Staging::new(if count == 0 { 0 } else { take(count) }, count);
            }
            if info.dest {
                mach.dest = Dest::full(take(1));
            }
            for (k, src) in inst.sources().iter().enumerate() {
                let base = match src.operand {
                    Operand::Value(_) | Operand::Pair(..) => Base::Register(take(2)),
                    Operand::Const(_) => Base::Immediate(0),
                    Operand::Uniform(u) => Base::Uniform(u),
                    Operand::Special(sp) => Base::Special(sp),
                    Operand::None => panic!("{name}: {} source {k} is empty", info.name),
                };
                mach.srcs[k] = src.to_machine(base);
            }
            let word = encode(&mach)
                .unwrap_or_else(|e| panic!("{name}: {} does not encode: {e}", tgsi2va::valhall::print(&mach)));
            let back = decode(word).unwrap_or_else(|e| panic!("{name}: {:#x} does not decode: {e:?}", word));
            assert_eq!(back, mach, "{name}: encode/decode round trip of {}", info.name);
        }
    }
}

/// Lowers one case and compares it with its expectation.
fn run(name: &str) {
    let source_path = dir().join(format!("{name}.tgsi"));
    let text = std::fs::read_to_string(&source_path).unwrap_or_else(|e| panic!("{}: {e}", source_path.display()));
    let program = tgsi2va::tgsi::parse(&text).unwrap_or_else(|d| {
        panic!("{name}.tgsi does not parse:\n{}", render(&d.0, name, &text, MessageFormat::Human, false))
    });
    let problems: Vec<_> = tgsi2va::tgsi::check(&program).into_iter().filter(|d| d.is_error()).collect();
    assert!(
        problems.is_empty(),
        "{name}.tgsi does not check:\n{}",
        render(&problems, name, &text, MessageFormat::Human, false)
    );
    let (actual, ext) = match tgsi2va::lower::lower(&program, &tgsi2va::lower::Options::default()) {
        Ok(lowered) => {
            if let Err(errors) = tgsi2va::ir::verify::verify(&lowered.shader) {
                panic!("{name}: invalid IR:\n  {}\n{}", errors.join("\n  "), tgsi2va::ir::text::print(&lowered.shader));
            }
            let printed = tgsi2va::ir::text::print(&lowered.shader);
            // The text form is complete: it parses back to the same shader.
            let reparsed = tgsi2va::ir::text::parse(&printed)
                .unwrap_or_else(|e| panic!("{name}: the printed IR does not parse: {e:?}\n{printed}"));
            assert_eq!(printed, tgsi2va::ir::text::print(&reparsed), "{name}: IR text round trip");
            check_encodable(name, &lowered.shader);
            (format!("{}{printed}", meta_lines(&lowered.meta)), "ir")
        }
        Err(d) => (render(&d.0, &format!("{name}.tgsi"), &text, MessageFormat::Human, false), "err"),
    };
    let expected_path = dir().join(format!("{name}.{ext}"));
    let other = dir().join(format!("{name}.{}", if ext == "ir" { "err" } else { "ir" }));
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&expected_path, &actual).unwrap();
        let _ = std::fs::remove_file(&other);
        return;
    }
    assert!(!other.exists(), "{name}: expected {}, but the lowering produced .{ext}:\n{actual}", other.display());
    let expected = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with BLESS=1 to create it)\n{actual}", expected_path.display()));
    assert_eq!(expected, actual, "{name}");
}

macro_rules! cases {
    ($($name:ident)*) => {
        $(
            #[test]
            fn $name() {
                run(stringify!($name));
            }
        )*

        /// Every case file has a test, so none is forgotten.
        #[test]
        fn every_case_file_is_listed() {
            let listed = [$(stringify!($name)),*];
            let mut files: Vec<String> = std::fs::read_dir(dir())
                .unwrap()
                .filter_map(|e| {
                    let path = e.unwrap().path();
                    (path.extension()? == "tgsi").then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
                })
                .collect();
            files.sort();
            for f in &files {
                assert!(listed.contains(&f.as_str()), "tests/lower/memory/{f}.tgsi has no test in lower_memory.rs");
            }
        }
    };
}

cases! {
    atomic_loops
    bindless
    bindless_constant_handles
    image_atomics
    image_handles
    image_load_store
    image_targets
    resq
    atomic_one_and_no_result
    buffer_address_table_full
    buffer_atomics
    buffer_indirect
    buffer_load
    buffer_pushed_address
    buffer_store_masks
    constbuf_load
    control_flow
    fragment_helper_guard
    fragment_side_effects
    reject_global_memory
    reject_hwatomic
    reject_image_formats
    reject_image_store_mask
    reject_misc
    reject_shared_in_fragment
    shared_atomics
    shared_const_only
    shared_load_store
    vertex_buffer
}
