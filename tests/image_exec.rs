//! Memory semantics in both executors, end to end: every atomic on a buffer, shared memory and an
//! image with hand-computed results; image format conversions through STORE/LOAD; out-of-bounds
//! image accesses; and the image samples under `verify`. Each shader runs in the interpreter
//! and, compiled, in the emulator on the same inputs; both must give the expected words.

use tgsi2va::exec::bytes_to_words;
use tgsi2va::exec::io::{Inputs, Outputs};
use tgsi2va::interp;

/// Runs `text` in both executors; returns (interpreter, emulator) outputs.
fn both(text: &str, inputs: &str) -> (Outputs, Outputs) {
    let inputs = Inputs::from_json(inputs).unwrap();
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    let run = interp::run(&program, &inputs).unwrap_or_else(|e| panic!("interpreter: {e}\n{text}"));
    let options = tgsi2va::compile::Options { contract: false, ..Default::default() };
    let compiled = tgsi2va::compile::compile(text, &options).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let emulated =
        tgsi2va::emu::run(&compiled.blob, &compiled.meta, &inputs).unwrap_or_else(|e| panic!("emulator: {e}\n{text}"));
    (run.outputs, emulated)
}

const HEADER: &str = "COMP
PROPERTY CS_FIXED_BLOCK_WIDTH 4
PROPERTY CS_FIXED_BLOCK_HEIGHT 1
PROPERTY CS_FIXED_BLOCK_DEPTH 1
DCL SV[0], THREAD_ID
DCL BUFFER[0]
";

/// Thread ids 0–3 (integers: bit patterns) and a zeroed 128-word buffer.
fn inputs(images: &str) -> String {
    format!(
        r#"{{"SV[0]": [["0x0", 0, 0, 0], ["0x1", 0, 0, 0], ["0x2", 0, 0, 0], ["0x3", 0, 0, 0]],
            "buffers": {{"0": [{}]}}, "images": {{{images}}}}}"#,
        vec!["0"; 128].join(", ")
    )
}

/// One atomic case: the opcode, the old memory value, the operand, the ATOMCAS new value, and
/// the expected new memory value (the result is always the old value).
struct Case {
    op: &'static str,
    old: u32,
    operand: u32,
    swap: u32,
    new: u32,
}

/// Every lane applies `case` to its own word of BUFFER[0] (byte 256 + 4·lane), of shared memory
/// (byte 4·lane) and of a 1D R32 image (texel lane); it records the three results at word
/// 16·lane and the three final values at word 16·lane + 4.
fn atomic_case(case: &Case, format: &str) {
    let extra = if case.op == "ATOMCAS" { ", IMM[0].zzzz" } else { "" };
    let op = case.op;
    // ATOMFADD and the wrapping atomics take no memory items: the declaration describes the image.
    let items =
        if op.ends_with("_WRAP") || op == "ATOMFADD" { String::new() } else { format!(", 1D, PIPE_FORMAT_{format}") };
    let text = format!(
        "{HEADER}DCL IMAGE[0], 1D, PIPE_FORMAT_{format}, WR
DCL MEMORY[0], SHARED
DCL TEMP[0..2], LOCAL
IMM[0] UINT32 {{{}, {}, {}, 0}}
IMM[1] UINT32 {{2, 256, 6, 16}}
  0: SHL TEMP[0].x, SV[0].xxxx, IMM[1].xxxx
  1: UADD TEMP[0].y, TEMP[0].xxxx, IMM[1].yyyy
  2: SHL TEMP[0].z, SV[0].xxxx, IMM[1].zzzz
  3: UADD TEMP[0].w, TEMP[0].zzzz, IMM[1].wwww
  4: STORE BUFFER[0].x, TEMP[0].yyyy, IMM[0].xxxx
  5: STORE MEMORY[0].x, TEMP[0].xxxx, IMM[0].xxxx
  6: STORE IMAGE[0].x, SV[0].xxxx, IMM[0].xxxx, 1D, PIPE_FORMAT_{format}
  7: {op} TEMP[1].x, BUFFER[0], TEMP[0].yyyy, IMM[0].yyyy{extra}
  8: {op} TEMP[1].y, MEMORY[0], TEMP[0].xxxx, IMM[0].yyyy{extra}
  9: {op} TEMP[1].z, IMAGE[0], SV[0].xxxx, IMM[0].yyyy{extra}{items}
 10: LOAD TEMP[2].x, BUFFER[0], TEMP[0].yyyy
 11: LOAD TEMP[2].y, MEMORY[0].xxxx, TEMP[0].xxxx
 12: LOAD TEMP[2].z, IMAGE[0].xxxx, SV[0].xxxx, 1D, PIPE_FORMAT_{format}
 13: STORE BUFFER[0].xyz, TEMP[0].zzzz, TEMP[1]
 14: STORE BUFFER[0].xyz, TEMP[0].wwww, TEMP[2]
 15: END
",
        case.old, case.operand, case.swap
    );
    let image = format!(r#""0": {{"dim": "1d", "format": "{format}", "width": 8}}"#);
    let (interp, emu) = both(&text, &inputs(&image));
    for (who, out) in [("interpreter", &interp), ("emulator", &emu)] {
        let b = &out.buffers[&0];
        for lane in 0..4 {
            let at = 16 * lane;
            assert_eq!(&b[at..at + 3], [case.old; 3], "{who}: {op} {:#x}, {:#x}: results", case.old, case.operand);
            assert_eq!(&b[at + 4..at + 7], [case.new; 3], "{who}: {op} {:#x}, {:#x}: memory", case.old, case.operand);
        }
        assert_eq!(out.images[&0][..4], [case.new; 4], "{who}: {op}: image texels");
    }
    assert_eq!(interp, emu);
}

#[test]
fn every_atomic_on_buffers_shared_memory_and_images() {
    let m = |x: i32| x as u32;
    let cases = [
        Case { op: "ATOMUADD", old: 0xFFFF_FFF0, operand: 0x20, swap: 0, new: 0x10 },
        Case { op: "ATOMUADD", old: 5, operand: 1, swap: 0, new: 6 },
        Case { op: "ATOMUADD", old: 5, operand: u32::MAX, swap: 0, new: 4 },
        Case { op: "ATOMXCHG", old: 7, operand: 9, swap: 0, new: 9 },
        Case { op: "ATOMCAS", old: 7, operand: 7, swap: 9, new: 9 },
        Case { op: "ATOMCAS", old: 7, operand: 8, swap: 9, new: 7 },
        Case { op: "ATOMAND", old: 0xF0F0, operand: 0xFF00, swap: 0, new: 0xF000 },
        Case { op: "ATOMOR", old: 0xF0F0, operand: 0x0F00, swap: 0, new: 0xFFF0 },
        Case { op: "ATOMOR", old: 4, operand: 1, swap: 0, new: 5 },
        Case { op: "ATOMXOR", old: 0xFF00, operand: 0x0FF0, swap: 0, new: 0xF0F0 },
        Case { op: "ATOMUMIN", old: 0xFFFF_FFFE, operand: 3, swap: 0, new: 3 },
        Case { op: "ATOMUMAX", old: 0xFFFF_FFFE, operand: 3, swap: 0, new: 0xFFFF_FFFE },
        Case { op: "ATOMUMAX", old: 0, operand: 1, swap: 0, new: 1 },
        Case { op: "ATOMIMIN", old: m(-2), operand: 3, swap: 0, new: m(-2) },
        Case { op: "ATOMIMAX", old: m(-2), operand: 3, swap: 0, new: 3 },
        Case { op: "ATOMIMAX", old: m(-5), operand: 1, swap: 0, new: 1 },
        Case { op: "ATOMINC_WRAP", old: 3, operand: 5, swap: 0, new: 4 },
        Case { op: "ATOMINC_WRAP", old: 5, operand: 5, swap: 0, new: 0 },
        Case { op: "ATOMINC_WRAP", old: 7, operand: 5, swap: 0, new: 0 },
        Case { op: "ATOMINC_WRAP", old: u32::MAX, operand: u32::MAX, swap: 0, new: 0 },
        Case { op: "ATOMDEC_WRAP", old: 3, operand: 5, swap: 0, new: 2 },
        Case { op: "ATOMDEC_WRAP", old: 5, operand: 5, swap: 0, new: 4 },
        Case { op: "ATOMDEC_WRAP", old: 0, operand: 5, swap: 0, new: 5 },
        Case { op: "ATOMDEC_WRAP", old: 7, operand: 5, swap: 0, new: 5 },
        Case { op: "ATOMDEC_WRAP", old: 0, operand: u32::MAX, swap: 0, new: u32::MAX },
    ];
    for case in &cases {
        atomic_case(case, "R32_UINT");
    }
    atomic_case(&Case { op: "ATOMIMIN", old: m(-2), operand: m(-7), swap: 0, new: m(-7) }, "R32_SINT");
    let f = |x: f32| x.to_bits();
    atomic_case(&Case { op: "ATOMFADD", old: f(1.5), operand: f(0.25), swap: 0, new: f(1.75) }, "R32_FLOAT");
    atomic_case(&Case { op: "ATOMFADD", old: f(1.0), operand: f(-3.0), swap: 0, new: f(-2.0) }, "R32_FLOAT");
    atomic_case(&Case { op: "ATOMXCHG", old: f(1.0), operand: f(-3.0), swap: 0, new: f(-3.0) }, "R32_FLOAT");
}

/// (format, stored values, expected texel words, expected loaded values).
type Conversion = (&'static str, [u32; 4], Vec<u32>, [u32; 4]);

/// STORE of the same register values to images of many formats, then LOAD back: the packed
/// texels and the unpacked values, by hand.
#[test]
fn format_conversions_through_store_and_load() {
    let f = |x: f32| x.to_bits();
    let cases: [Conversion; 8] = [
        (
            "R8G8B8A8_UNORM",
            [f(1.0), f(0.5), f(-2.0), f(0.2)],
            vec![0x3300_80FF],
            [f(1.0), f(128.0 / 255.0), f(0.0), f(0.2)],
        ),
        ("R16G16_SNORM", [f(-1.0), f(0.5), 0, 0], vec![0x4000_8001], [f(-1.0), f(16384.0 / 32767.0), 0, f(1.0)]),
        ("R8_SINT", [(-300i32) as u32, 0, 0, 0], vec![0x80], [(-128i32) as u32, 0, 0, 1]),
        ("R10G10B10A2_UINT", [1023, 2000, 5, 3], vec![1023 | 1023 << 10 | 5 << 20 | 3 << 30], [1023, 1023, 5, 3]),
        ("R16_FLOAT", [f(0.1), 0, 0, 0], vec![0x2E66], [half::f16::from_bits(0x2E66).to_f32().to_bits(), 0, 0, f(1.0)]),
        ("R11G11B10_FLOAT", [f(1.0), f(-1.0), f(0.5), 0], vec![15 << 6 | (14 << 5) << 22], [f(1.0), 0, f(0.5), f(1.0)]),
        ("R32G32_FLOAT", [f(2.5), 0x7FC0_0001, 0, 0], vec![f(2.5), 0x7FC0_0001], [f(2.5), 0x7FC0_0001, 0, f(1.0)]),
        ("R16G16B16A16_UINT", [70000, 2, 3, 4], vec![0x0002_FFFF, 0x0004_0003], [65535, 2, 3, 4]),
    ];
    for (format, stored, texel, loaded) in cases {
        let text = format!(
            "{HEADER}DCL IMAGE[0], 2D, PIPE_FORMAT_{format}, WR
DCL TEMP[0..1], LOCAL
IMM[0] UINT32 {{{}, {}, {}, {}}}
IMM[1] UINT32 {{4, 0, 0, 0}}
  0: STORE IMAGE[0], SV[0].xyyy, IMM[0], 2D, PIPE_FORMAT_{format}
  1: LOAD TEMP[0], IMAGE[0], SV[0].xyyy, 2D, PIPE_FORMAT_{format}
  2: SHL TEMP[1].x, SV[0].xxxx, IMM[1].xxxx
  3: STORE BUFFER[0], TEMP[1].xxxx, TEMP[0]
  4: END
",
            stored[0], stored[1], stored[2], stored[3]
        );
        let image = format!(r#""0": {{"dim": "2d", "format": "{format}", "width": 4, "height": 2}}"#);
        let (interp, emu) = both(&text, &inputs(&image));
        for (who, out) in [("interpreter", &interp), ("emulator", &emu)] {
            let words = &out.images[&0];
            let per_texel = texel.len().max(1);
            let bytes_per_texel = tgsi2va::exec::image::Format::by_name(format).unwrap().texel_bytes();
            if bytes_per_texel >= 4 {
                assert_eq!(words[..per_texel], texel[..], "{who}: {format} texel 0");
                assert_eq!(words[3 * per_texel..4 * per_texel], texel[..], "{who}: {format} texel 3");
            } else {
                // Texels narrower than a word: texel 0 is the low bytes of word 0.
                let mask = (1u32 << (8 * bytes_per_texel)) - 1;
                assert_eq!(words[0] & mask, texel[0], "{who}: {format} texel 0");
            }
            for lane in 0..4 {
                assert_eq!(out.buffers[&0][4 * lane..4 * lane + 4], loaded, "{who}: {format} lane {lane}");
            }
        }
        assert_eq!(interp, emu, "{format}");
    }
}

/// Loads outside the image read zero, stores and atomics there change nothing and atomics
/// return zero; negative coordinates are outside too.
#[test]
fn out_of_bounds_image_accesses() {
    let text = format!(
        "{HEADER}DCL IMAGE[0], 2D_ARRAY, PIPE_FORMAT_R32_UINT, WR
DCL TEMP[0..3], LOCAL
IMM[0] INT32 {{16, 0, 0, 0}}
IMM[1] INT32 {{0, 16, 0, 0}}
IMM[2] INT32 {{0, 0, 2, 0}}
IMM[3] INT32 {{-1, 0, 0, 0}}
IMM[4] UINT32 {{4, 77, 0, 0}}
  0: LOAD TEMP[0].x, IMAGE[0], IMM[0], 2D_ARRAY, PIPE_FORMAT_R32_UINT
  1: LOAD TEMP[0].y, IMAGE[0], IMM[1], 2D_ARRAY, PIPE_FORMAT_R32_UINT
  2: LOAD TEMP[0].z, IMAGE[0], IMM[2], 2D_ARRAY, PIPE_FORMAT_R32_UINT
  3: LOAD TEMP[0].w, IMAGE[0], IMM[3], 2D_ARRAY, PIPE_FORMAT_R32_UINT
  4: STORE IMAGE[0].x, IMM[0], IMM[4].yyyy, 2D_ARRAY, PIPE_FORMAT_R32_UINT
  5: STORE IMAGE[0].x, IMM[3], IMM[4].yyyy, 2D_ARRAY, PIPE_FORMAT_R32_UINT
  6: ATOMUADD TEMP[1].x, IMAGE[0], IMM[2], IMM[4].yyyy, 2D_ARRAY, PIPE_FORMAT_R32_UINT
  7: ATOMXCHG TEMP[1].y, IMAGE[0], IMM[1], IMM[4].yyyy, 2D_ARRAY, PIPE_FORMAT_R32_UINT
  8: LOAD TEMP[2], IMAGE[0], IMM[0], 2D_ARRAY, PIPE_FORMAT_R32_UINT
  9: SHL TEMP[3].x, SV[0].xxxx, IMM[4].xxxx
 10: STORE BUFFER[0], TEMP[3].xxxx, TEMP[0]
 11: STORE BUFFER[0].xy, TEMP[3].xxxx, TEMP[1]
 12: END
"
    );
    let image =
        r#""0": {"dim": "2d", "array": true, "layers": 2, "format": "R32_UINT", "width": 16, "height": 16, "seed": 3}"#;
    let initial = bytes_to_words(&Inputs::from_json(&inputs(image)).unwrap().images[&0].initial_data());
    let (interp, emu) = both(&text, &inputs(image));
    for (who, out) in [("interpreter", &interp), ("emulator", &emu)] {
        assert_eq!(out.images[&0], initial, "{who}: nothing was written");
        for lane in 0..4 {
            let at = 16 * lane / 4;
            assert_eq!(out.buffers[&0][at..at + 4], [0, 0, 0, 0], "{who}: lane {lane}");
        }
    }
    assert_eq!(interp, emu);
}

/// RESQ reports the image's size per target, and a bindless handle from IMG2HND reaches the
/// same image as its unit.
#[test]
fn sizes_and_bindless_handles() {
    let text = format!(
        "{HEADER}DCL IMAGE[0], CUBEARRAY, PIPE_FORMAT_R32_FLOAT, WR
DCL IMAGE[1], 2D_MSAA, PIPE_FORMAT_R16G16_UINT, WR
DCL TEMP[0..3], LOCAL
IMM[0] UINT32 {{3, 1, 0, 2}}
IMM[1] UINT32 {{5, 6, 0, 0}}
IMM[2] UINT32 {{0, 16, 32, 48}}
  0: RESQ TEMP[0], IMAGE[0]
  1: RESQ TEMP[1], IMAGE[1]
  2: IMG2HND TEMP[2].xy, IMAGE[1], 2D_MSAA, PIPE_FORMAT_R16G16_UINT
  3: STORE TEMP[2].xy, IMM[0], IMM[1], 2D_MSAA, PIPE_FORMAT_R16G16_UINT
  4: LOAD TEMP[3], IMAGE[1], IMM[0], 2D_MSAA, PIPE_FORMAT_R16G16_UINT
  5: STORE BUFFER[0], IMM[2].xxxx, TEMP[0]
  6: STORE BUFFER[0], IMM[2].yyyy, TEMP[1]
  7: STORE BUFFER[0].xy, IMM[2].zzzz, TEMP[2]
  8: STORE BUFFER[0], IMM[2].wwww, TEMP[3]
  9: END
"
    );
    let images = r#""0": {"dim": "cube", "array": true, "layers": 3, "format": "R32_FLOAT", "width": 8, "height": 8},
                    "1": {"dim": "2d", "samples": 4, "format": "R16G16_UINT", "width": 4, "height": 4}"#;
    let (interp, emu) = both(&text, &inputs(images));
    for (who, out) in [("interpreter", &interp), ("emulator", &emu)] {
        let b = &out.buffers[&0];
        assert_eq!(b[0..4], [8, 8, 3, 1], "{who}: cube arrays report cubes in z");
        assert_eq!(b[4..8], [4, 4, 0, 4], "{who}: samples in w");
        assert_eq!(b[8..10], [5 << 24 | 1, 0], "{who}: the handle of image 1");
        // (x 3, y 1, sample 2) of a 4×4 image with 4 samples is texel (1·4 + 3)·4 + 2.
        assert_eq!(out.images[&1][30], 5 | 6 << 16, "{who}: the bindless store reached image 1");
        assert_eq!(b[12..16], [5, 6, 0, 1], "{who}: loaded back, alpha 1");
    }
    assert_eq!(interp, emu);
}

/// The five image samples of the brief and the new realistic one pass `verify`, and the
/// comparison covers their images.
#[test]
fn image_samples_verify() {
    let samples = [
        "cs/image.tgsi",
        "cs/bindless-handles.tgsi",
        "cs/texture.tgsi",
        "legacy/cs-fences.tgsi",
        "realistic/histogram.comp.tgsi",
        "realistic/image-blur.comp.tgsi",
    ];
    for name in samples {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let options = tgsi2va::verify::Options { seeds: 4, ..Default::default() };
        let report = tgsi2va::verify::verify(&text, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(report.passed(), "{name}: {:?}", report.mismatches.first());
        let program = tgsi2va::tgsi::parse(&text).unwrap();
        let image_words: u64 = interp::inputs::generate(&program, 1).images.values().map(|i| i.byte_len() / 4).sum();
        assert!(report.compared >= 4 * image_words, "{name}: images compared");
    }
}

/// The blur sample writes its destination image for some seeds (so `verify` compares real
/// image stores), and what it writes is the 1-2-1 filter of the source by hand.
#[test]
fn blur_sample_writes_the_filtered_image() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples/realistic/image-blur.comp.tgsi");
    let text = std::fs::read_to_string(&path).unwrap();
    let program = tgsi2va::tgsi::parse(&text).unwrap();
    let mut written = 0;
    for seed in 1..=8 {
        let inputs = interp::inputs::generate(&program, seed);
        let run = interp::run(&program, &inputs).unwrap();
        let (src, dst) = (&inputs.images[&0], &inputs.images[&1]);
        let src_data = src.initial_data();
        let initial = dst.initial_data();
        let out: Vec<u8> = run.outputs.images[&1].iter().flat_map(|w| w.to_le_bytes()).collect();
        for y in 0..dst.height {
            for x in 0..dst.width {
                let at = |x: u32, y: u32| tgsi2va::exec::image::TexelCoord { x, y, ..Default::default() };
                let o = dst.offset(at(x, y)).unwrap();
                if out[o..o + 8] == initial[o..o + 8] {
                    continue;
                }
                written += 1;
                // Sum over the 3×3 neighbourhood (clamped) in the interpreter's order: rows
                // dy = −1..1, columns dx = −1..1, `acc = fma(texel, w, acc)` (MAD is fused).
                let mut acc = [0.0f32; 4];
                for dy in -1i32..=1 {
                    for dx in -1i32..=1 {
                        let cx = (x as i32 + dx).clamp(0, src.width as i32 - 1) as u32;
                        let cy = (y as i32 + dy).clamp(0, src.height as i32 - 1) as u32;
                        let so = src.offset(at(cx, cy)).unwrap();
                        let texel = src.format.unpack(&src_data[so..so + 4]);
                        let w = (dx.abs() as f32 * -0.25 + 0.5) * (dy.abs() as f32 * -0.25 + 0.5);
                        for c in 0..4 {
                            acc[c] = f32::from_bits(texel[c]).mul_add(w, acc[c]);
                        }
                    }
                }
                let expected = dst.format.pack(acc.map(f32::to_bits));
                assert_eq!(out[o..o + 8], expected[..], "seed {seed} pixel ({x}, {y})");
            }
        }
    }
    assert!(written >= 16, "only {written} pixels written");
}
