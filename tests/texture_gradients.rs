//! Explicit-derivative sampling and LOD queries against hand-computed values: the shared model
//! (`exec::texture`), the emulator's `TEX_GRADIENT` (derivative and force-delta forms) and
//! `TEX_SINGLE.grdesc`, and the multisample texel model. (The compiled sequences are covered by
//! `tests/lower_texture.rs`; interpreter ≡ emulator by `tgsi2va verify` on the samples.)

use tgsi2va::emu::{ErrorKind, Machine, Program, Stage};
use tgsi2va::exec::texture::{Dim, SampleCoords, TexelKind, Texture, lod_to_fixed88};

fn tex2d() -> Texture {
    Texture::default_for(Dim::D2, false, TexelKind::Float, 0)
}

#[test]
fn gradient_lod_is_log2_of_the_longer_scaled_derivative() {
    let t = tex2d(); // 16×16, 5 levels
    // One texel per pixel in x, four in y: log2(4) = 2.
    assert_eq!(t.gradient_lod([1.0 / 16.0, 0.0, 0.0], [0.0, 4.0 / 16.0, 0.0]), 0x200);
    // Anisotropy is ignored: the longer axis decides (8 texels → 3), not an average.
    assert_eq!(t.gradient_lod([8.0 / 16.0, 0.0, 0.0], [0.0, 1.0 / 16.0, 0.0]), 0x300);
    // Both components of one derivative count: |(3, 4)| = 5 texels → log2 5 = 2.3219 → 0x252.
    assert_eq!(t.gradient_lod([3.0 / 16.0, 4.0 / 16.0, 0.0], [0.0, 0.0, 0.0]), lod_to_fixed88(5f32.log2()));
    assert_eq!(lod_to_fixed88(5f32.log2()), 0x252, "2.3219 · 256 = 594.4, truncated");
    // The sign of a derivative does not matter.
    assert_eq!(t.gradient_lod([-1.0 / 16.0, 0.0, 0.0], [0.0, -2.0 / 16.0, 0.0]), 0x100);
    // ±0 derivatives: rho = 0, log2 = −∞, saturated at −16 levels.
    assert_eq!(t.gradient_lod([0.0; 3], [-0.0; 3]), -4096);
    // A NaN derivative: the NaN length is ignored by the max (the other one decides) …
    assert_eq!(t.gradient_lod([f32::NAN, 0.0, 0.0], [0.0, 2.0 / 16.0, 0.0]), 0x100);
    // … and NaN everywhere gives the conversion's NaN result (−1 after clamp_m1_1: −16 levels).
    assert_eq!(t.gradient_lod([f32::NAN; 3], [f32::NAN; 3]), -4096);
    assert_eq!(lod_to_fixed88(f32::NAN), -4096);
    // Huge derivatives saturate at +16 levels; the level selection clamps to the chain.
    assert_eq!(t.gradient_lod([1e30, 0.0, 0.0], [0.0; 3]), 4096);
    assert_eq!(t.select_level(4096), 4);
    // 1D uses s only, 3D adds r with the depth as scale, RECT is unscaled.
    let d1 = Texture::default_for(Dim::D1, false, TexelKind::Float, 0);
    assert_eq!(d1.gradient_lod([2.0 / 16.0, 100.0, 100.0], [0.0; 3]), 0x100);
    let d3 = Texture::default_for(Dim::D3, false, TexelKind::Float, 0); // 16×16×4
    assert_eq!(d3.gradient_lod([0.0, 0.0, 2.0], [0.0; 3]), 0x300);
    let rect = Texture::default_for(Dim::Rect, false, TexelKind::Float, 0);
    assert_eq!(rect.gradient_lod([4.0, 0.0, 0.0], [0.0; 3]), 0x200);
}

#[test]
fn query_lod_is_the_accessed_level_and_the_raw_lod() {
    let t = tex2d();
    let quad = |dx: f32| [[0.0, 0.0, 0.0], [dx, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
    // 1.5 levels: nearest level rounds ties up (0x180 + 0x80 = 0x200 → 2).
    assert_eq!(t.query_lod(&quad(2.0f32.powf(1.5) / 16.0)).0, 2.0);
    assert_eq!(t.query_lod(&quad(4.0 / 16.0)), (2.0, 2.0));
    // Below 0 and past the last level: x clamped to the chain, y raw.
    assert_eq!(t.query_lod(&quad(0.25 / 16.0)), (0.0, -2.0));
    assert_eq!(t.query_lod(&quad(64.0)), (4.0, 10.0));
}

/// Narrow handle of texture unit 0, sampler 0 in r4:r5.
fn machine(stage: Stage) -> Machine {
    let mut m = Machine::new(stage);
    m.set_reg_all(60, 1); // coverage for ATEST
    m.env.textures.insert(0, tex2d());
    m.set_reg_all(4, 0x2000_1800);
    m.set_reg_all(5, 0);
    m
}

#[test]
fn emulator_gradient_descriptor_and_grdesc_sampling() {
    let t = tex2d();
    let mut m = machine(Stage::Compute);
    // ddx = (64/16, 0): 64 texels → LOD 6; ddy = (0, 1/16).
    for (r, v) in [(0, 4.0f32), (1, 0.0), (2, 0.0), (3, 1.0 / 16.0)] {
        m.set_reg_all(r, v.to_bits());
    }
    m.set_reg_all(16, 0.3f32.to_bits());
    m.set_reg_all(17, 0.7f32.to_bits());
    let text = "TEX_GRADIENT.slot0.u.32.rg.2d.lod_bias_disable.lod_clamp_disable.derivative_enable.wait0 @r8:r9, @r0:r1:r2:r3, r4
TEX_GRADIENT.slot1.u.32.r.2d.derivative_enable.wait1 @r10, @r0:r1:r2:r3, r4
MOV.i32 r18, r8
MOV.i32 r19, r9
TEX_SINGLE.slot2.f.32.2d.grdesc.wait2 @r12:r13:r14:r15, @r16:r17:r18:r19, r4
NOP.end";
    m.run(&Program::assemble(text).unwrap()).unwrap();
    assert_eq!(m.reg(8), [0x600; 4], "unclamped descriptor LOD");
    assert_eq!(m.reg(9), [0; 4], "no anisotropy word");
    assert_eq!(m.reg(10), [0x400; 4], "clamped to levels − 1");
    let expected = t.sample(SampleCoords { s: 0.3, t: 0.7, ..SampleCoords::default() }, 0x600);
    assert_eq!(expected, t.texel(4, 0, 0, 0, 0), "level 4 is 1×1");
    for (k, r) in (12..16).enumerate() {
        assert_eq!(m.reg(r), [expected[k]; 4]);
    }
}

#[test]
fn emulator_force_delta_needs_a_quad() {
    let mut m = machine(Stage::Fragment);
    // Lane bit 0 is x: s grows by 4 texels per pixel in x, t by 1 per pixel in y → LOD 2.
    m.set_reg_lanes(0, [0.0f32, 0.25, 0.0, 0.25].map(f32::to_bits));
    m.set_reg_lanes(1, [0.0f32, 0.0, 1.0 / 16.0, 1.0 / 16.0].map(f32::to_bits));
    let text = "TEX_GRADIENT.slot0.u.32.r.2d.force_delta_enable.wait0 @r8, @r0:r1, r4
TEX_GRADIENT.slot1.u.32.r.2d.force_delta_enable.lod_clamp_disable.wait1 @r9, @r0:r1, r4
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.end";
    m.run(&Program::assemble(text).unwrap()).unwrap();
    assert_eq!(m.reg(8), [0x200; 4]);
    assert_eq!(m.reg(9), [0x200; 4]);
    // Far minified: clamped 4 levels, raw 10 (0xA00).
    let mut m = machine(Stage::Fragment);
    m.set_reg_lanes(0, [0.0f32, 64.0, 0.0, 64.0].map(f32::to_bits));
    m.set_reg_all(1, 0);
    m.run(&Program::assemble(text).unwrap()).unwrap();
    assert_eq!(m.reg(8), [0x400; 4]);
    assert_eq!(m.reg(9), [0xA00; 4]);
    // No quad outside fragment shaders; both flags at once are not modelled.
    let mut m = machine(Stage::Compute);
    m.set_reg_all(0, 0);
    m.set_reg_all(1, 0);
    let e = m.run(&Program::assemble(text).unwrap()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fault, "{e}");
    let mut m = machine(Stage::Fragment);
    m.set_reg_all(0, 0);
    m.set_reg_all(1, 0);
    let both = "TEX_GRADIENT.slot0.u.32.r.2d.force_delta_enable.derivative_enable.wait0 @r8, @r0:r1, r4\nNOP.end";
    let e = m.run(&Program::assemble(both).unwrap()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
}

#[test]
fn multisample_texels_differ_per_sample() {
    let t = tex2d().multisampled(4);
    assert_eq!(t.level_count(), 1);
    assert!(t.validate().is_ok());
    let samples: Vec<[u32; 4]> = (0..4).map(|s| t.texel_sample(0, 0, 3, 5, 0, s)).collect();
    for a in 0..4 {
        for b in a + 1..4 {
            assert_ne!(samples[a], samples[b], "samples {a} and {b}");
        }
    }
    assert_eq!(t.texel(0, 0, 3, 5, 0), samples[0], "texel() reads sample 0");
    assert_eq!(t.texel_sample(0, 0, 3, 5, 0, 4), [0; 4], "past the last sample");
    // Single-sample textures keep their texels (golden values) and have sample 0 only.
    let single = tex2d();
    assert_eq!(single.texel_sample(0, 0, 3, 5, 0, 0), single.texel(0, 0, 3, 5, 0));
    assert_eq!(single.texel_sample(0, 0, 3, 5, 0, 1), [0; 4]);
    // Invalid descriptions are reported.
    assert!(Texture { samples: 0, ..tex2d() }.validate().unwrap_err().contains("samples"));
    assert!(Texture { samples: 4, ..tex2d() }.validate().unwrap_err().contains("one level"));
    let json: Texture = serde_json::from_str(r#"{"dim": "2d", "width": 8, "levels": 1, "samples": 8}"#).unwrap();
    assert_eq!(json.samples, 8);
    assert!(json.validate().is_ok());
}

#[test]
fn emulator_multisample_fetch_reads_byte_2() {
    let t = tex2d().multisampled(4);
    let mut m = Machine::new(Stage::Compute);
    m.env.textures.insert(0, t.clone());
    m.set_reg_all(4, 0x2000_1800);
    m.set_reg_all(5, 0);
    m.set_reg_all(0, 3);
    m.set_reg_all(1, 5);
    m.set_reg_lanes(2, [0, 1 << 16, 3 << 16, 0xFF << 16]);
    m.run(&Program::assemble("TEX_FETCH.slot0.u.32.r.2d.texel_offset.wait0 @r8, @r0:r1:r2, r4\nNOP.end").unwrap())
        .unwrap();
    let x = |s| t.texel_sample(0, 0, 3, 5, 0, s)[0];
    assert_eq!(m.reg(8), [x(0), x(1), x(3), 0]);
}
