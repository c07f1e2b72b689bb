//! Robustness: running arbitrary words, and random valid instructions of every opcode with
//! random operands, on machines of every stage never panics (errors are fine). Also the whole
//! `emu::run` on random blobs and metadata.

mod common;

use common::random_instr::random_instr;
use common::rng::Rng;
use proptest::prelude::*;
use tgsi2va::emit::meta::{Metadata, Variant};
use tgsi2va::emu::memory::{RegionKind, SSBO_BASE, TLS_BASE, UBO_BASE, WLS_BASE};
use tgsi2va::emu::{self, AttributeData, Machine, Program, Stage, VaryingData};
use tgsi2va::exec::io::Inputs;
use tgsi2va::exec::texture::{Dim, TexelKind, Texture};
use tgsi2va::valhall::{Opcode, encode};

/// A machine with everything defined: registers, uniforms, memory, textures, varyings.
fn rich_machine(stage: Stage, rng: &mut Rng) -> Machine {
    let mut m = Machine::new(stage);
    m.options.max_steps = 64;
    for lane in 0..4 {
        for r in 0..64 {
            let v = match rng.below(4) {
                0 => rng.below(16) as u32,
                1 => (rng.below(2000) as f32 / 100.0 - 10.0).to_bits(),
                _ => rng.next() as u32,
            };
            m.set_reg(lane, r, v);
        }
    }
    for u in 0..128 {
        m.uniforms[u] = Some(rng.next() as u32);
    }
    m.memory.map(UBO_BASE, vec![7; 256], RegionKind::Ubo(0), false).unwrap();
    m.memory.map(SSBO_BASE, vec![0; 256], RegionKind::Ssbo(0), true).unwrap();
    for lane in 0..4 {
        m.memory.map(TLS_BASE + lane as u64 * 0x100_0000, vec![0; 64], RegionKind::Tls(lane), true).unwrap();
        m.env.tls_pointer[lane] = TLS_BASE + lane as u64 * 0x100_0000;
        m.env.wls_pointer[lane] = WLS_BASE;
    }
    m.memory.map(WLS_BASE, vec![0; 64], RegionKind::Wls(0), true).unwrap();
    for unit in 0..4u32 {
        let dim = [Dim::D2, Dim::Cube, Dim::D3, Dim::D1][unit as usize];
        m.env.textures.insert(unit, Texture::default_for(dim, unit == 2, TexelKind::Float, unit));
    }
    for offset in (0..256).step_by(16) {
        m.env.varyings.push(VaryingData { offset, flat: offset % 32 == 0, location: 0, values: [[1, 2, 3, 4]; 4] });
    }
    for index in 0..16 {
        m.env.attributes.insert(index, AttributeData { format: "f32".into(), values: [[5, 6, 7, 8]; 4] });
    }
    m.env.vertex_ids = [0, 1, 2, 3];
    for lane in 0..4 {
        m.set_reg(lane, 60, lane as u32);
        m.set_reg(lane, 61, 0);
    }
    m
}

#[test]
fn random_valid_instructions_never_panic() {
    let mut rng = Rng::new(0x5eed);
    let end = tgsi2va::valhall::assemble_line("NOP.end").unwrap();
    let mut ran = 0;
    let mut errors = 0;
    for round in 0..12 {
        for &op in Opcode::ALL.iter() {
            let instr = random_instr(op, &mut rng);
            let Ok(word) = encode(&instr) else { continue };
            if instr.check_hardware_rules().is_err() {
                assert!(Program::from_words(&[word]).is_err(), "hardware rules are checked at decode");
                continue;
            }
            let stage = [Stage::Vertex, Stage::Fragment, Stage::Compute][(round + op as usize) % 3];
            let program = Program::from_words(&[word, end]).expect("encoded words decode");
            let mut m = rich_machine(stage, &mut rng);
            m.options.allow_undefined = round % 2 == 0;
            ran += 1;
            if m.run(&program).is_err() {
                errors += 1;
            }
        }
    }
    assert!(ran > 2000, "{ran} programs ran");
    assert!(errors < ran, "some programs must succeed ({errors} of {ran} failed)");
}

#[test]
fn random_valid_sequences_never_panic() {
    let mut rng = Rng::new(0xabcdef);
    for _ in 0..400 {
        let words: Vec<u64> = (0..12)
            .filter_map(|_| {
                let op = Opcode::ALL[rng.below(Opcode::ALL.len() as u64) as usize];
                let instr = random_instr(op, &mut rng);
                instr.check_hardware_rules().ok().and_then(|()| encode(&instr).ok())
            })
            .collect();
        let program = Program::from_words(&words).expect("encoded words decode");
        let stage = [Stage::Vertex, Stage::Fragment, Stage::Compute][rng.below(3) as usize];
        let mut m = rich_machine(stage, &mut rng);
        m.options.allow_undefined = true;
        let _ = m.run(&program);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arbitrary_words_never_panic(words in proptest::collection::vec(any::<u64>(), 1..6), seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        if let Ok(program) = Program::from_words(&words) {
            let mut m = rich_machine(Stage::Fragment, &mut rng);
            let _ = m.run(&program);
            let mut m = rich_machine(Stage::Compute, &mut rng);
            m.options.allow_undefined = true;
            let _ = m.run(&program);
        }
    }

    #[test]
    fn arbitrary_blobs_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), offset in 0u32..300, size in 0u32..300, stage in 0usize..4) {
        let meta = Metadata {
            format_version: 1,
            stage: ["vertex", "fragment", "compute", "geometry"][stage].into(),
            arch: 9,
            variants: vec![Variant { name: ["position", "main", "main", "main"][stage].into(), offset, size, work_registers: 64, preload: vec![59, 60, 61], ..Variant::default() }],
            ..Metadata::default()
        };
        let _ = emu::run(&bytes, &meta, &Inputs::default());
    }
}
