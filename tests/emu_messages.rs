//! Message instructions at the machine level: load lanes and extension, every atomic
//! operation, varying and attribute register formats, texture result packing and shadow
//! compares, memory faults, and the cross-lane `WMASK`/`CLPER.u64`.

use tgsi2va::emu::memory::{IDVS_BASE, RegionKind, SSBO_BASE, UBO_BASE};
use tgsi2va::emu::{AttributeData, EmuError, ErrorKind, Machine, Program, Stage, VaryingData};
use tgsi2va::exec::texture::{Dim, SampleCoords, TexelKind, Texture};

/// A compute machine: SSBO 0 holds `words`, r13 = its handle, r16:r17 = its address.
fn machine(words: &[u32]) -> Machine {
    let mut m = Machine::new(Stage::Compute);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    m.memory.map(SSBO_BASE, bytes, RegionKind::Ssbo(0), true).unwrap();
    m.memory.map(UBO_BASE, vec![0x11; 64], RegionKind::Ubo(0), false).unwrap();
    m.set_reg_all(13, 0x0600_0000);
    m.set_reg_all(16, SSBO_BASE as u32);
    m.set_reg_all(17, (SSBO_BASE >> 32) as u32);
    m
}

fn run(m: &mut Machine, text: &str) -> Result<(), EmuError> {
    m.run(&Program::assemble(text).unwrap_or_else(|e| panic!("{e}")))
}

fn ssbo(m: &Machine) -> Vec<u32> {
    let r = m.memory.region(RegionKind::Ssbo(0)).unwrap();
    r.data.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn load_lanes_and_extension() {
    let mut m = machine(&[0x8281_80FF, 0x1234_5678, 0xCAFE_F00D, 0xDEAD_BEEF]);
    m.set_reg_all(0, 0xAAAA_AAAA);
    m.set_reg_all(1, 0xAAAA_AAAA);
    run(
        &mut m,
        "LOAD.i8.unsigned.b2.slot0.wait0 @r0, r16, offset:0
LOAD.i8.h1.slot1.wait1 @r1, r16, offset:0
LOAD.i8.w0.slot2.wait2 @r2, r16, offset:0
LOAD.i8.unsigned.w0.slot0.wait0 @r3, r16, offset:0
LOAD.i16.d0.slot1.wait1 @r4:r5, r16, offset:2
LOAD.i16.unsigned.h0.slot2.wait2 @r6, r16, offset:4
LOAD.i24.unsigned.slot0.wait0 @r7, r16, offset:1
LOAD.i48.unsigned.slot1.wait1 @r8:r9, r16, offset:4
LOAD.i96.unsigned.slot2.wait2 @r10:r11:r12, r16, offset:4
LOAD.i32.unsigned.d0.slot0.wait0 @r14:r15, r16, offset:12
NOP.end",
    )
    .unwrap();
    assert_eq!(m.reg(0)[0], 0xAAFF_AAAA, "b2 puts the byte in byte 2, keeps the rest");
    assert_eq!(m.reg(1)[0], 0xFFFF_AAAA, "h1: sign-extended byte in the high half");
    assert_eq!(m.reg(2)[0], 0xFFFF_FFFF, "w0 sign-extends without .unsigned");
    assert_eq!(m.reg(3)[0], 0xFF);
    assert_eq!([m.reg(4)[0], m.reg(5)[0]], [0xFFFF_8281, 0xFFFF_FFFF], "d0 extends to 64 bits");
    assert_eq!(m.reg(6)[0] & 0xFFFF, 0x5678);
    assert_eq!(m.reg(7)[0], 0x0081_80FF >> 8 | 0x82 << 16);
    assert_eq!([m.reg(8)[0], m.reg(9)[0]], [0x1234_5678, 0xF00D]);
    assert_eq!([m.reg(10)[0], m.reg(11)[0], m.reg(12)[0]], [0x1234_5678, 0xCAFE_F00D, 0xDEAD_BEEF]);
    assert_eq!([m.reg(14)[0], m.reg(15)[0]], [0xDEAD_BEEF, 0], ".unsigned d0");
    // The staging count must match what the load writes.
    let e = run(&mut m, "LOAD.i64.unsigned.slot0.end @r0, r16, offset:0").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fault, "{e}");
}

#[test]
fn stores_and_memory_faults() {
    let mut m = machine(&[0; 4]);
    m.set_reg_all(0, 0x4433_2211);
    m.set_reg_all(1, 0x8877_6655);
    m.live = [true, false, false, false];
    run(&mut m, "STORE.i48.slot0.wait0 @r0:r1, r16, offset:4\nSTORE.i8.slot0.end @r1, r16, offset:1").unwrap();
    assert_eq!(ssbo(&m), [0x0000_5500, 0x4433_2211, 0x6655, 0]);
    let faults = [
        ("STORE.i64.slot0.end @r0:r1, r16, offset:12", "runs past the end"),
        ("STORE.i32.slot0.end @r0, r16, offset:2", "aligned"),
        ("STORE.i32.slot0.end @r0, r16, offset:-4", "not mapped"),
        (
            "IADD_IMM.i32 r2, 0x0, #0x0\nLD_BUFFER.i32.unsigned.slot0.wait0 @r3, r2, 0x0\nLEA_BUFFER.slot0.wait0 @r4:r5, r2, 0x0\nSTORE.i32.slot0.end @r0, r4, offset:0",
            "read-only",
        ),
        ("STORE.i32.istream.slot0.end @r0, r16, offset:0", "not an IDVS record"),
        ("IADD_IMM.i32 r2, 0x0, #0x07000000\nLD_BUFFER.i32.unsigned.slot0.end @r3, r2, r2", "table 7"),
    ];
    for (text, words) in faults {
        let e = run(&mut m, text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Fault, "{text}: {e}");
        assert!(e.message.contains(words), "{text}: {e}");
    }
    // LD_BUFFER is bounds-checked against the descriptor (robust buffer access): a read
    // past the end yields zeros instead of faulting, unlike a raw LOAD.
    m.set_reg_all(3, 0xAAAA_AAAA);
    run(&mut m, "IADD_IMM.i32 r2, 0x0, #0x14\nLD_BUFFER.i32.unsigned.slot0.end @r3, r2, r13").unwrap();
    assert_eq!(m.reg(3)[0], 0, "LD_BUFFER past the end reads zero");
    // IDVS records need a stream hint and cannot be read.
    m.set_reg_all(18, IDVS_BASE as u32);
    m.set_reg_all(19, (IDVS_BASE >> 32) as u32);
    let e = run(&mut m, "STORE.i32.slot0.end @r0, r18, offset:0").unwrap_err();
    assert!(e.message.contains("without .istream"), "{e}");
    let e = run(&mut m, "LOAD.i32.unsigned.slot0.end @r0, r18, offset:0").unwrap_err();
    assert!(e.message.contains("can only be stored to"), "{e}");
}

#[test]
fn every_atomic_operation() {
    let cases: [(&str, u32, u32, u32); 9] = [
        ("aadd", 5, 3, 8),
        ("asmin", 5, (-3i32) as u32, (-3i32) as u32),
        ("asmax", (-5i32) as u32, 3, 3),
        ("aumin", 5, (-3i32) as u32, 5),
        ("aumax", 5, (-3i32) as u32, (-3i32) as u32),
        ("aand", 0b1100, 0b1010, 0b1000),
        ("aor", 0b1100, 0b1010, 0b1110),
        ("axor", 0b1100, 0b1010, 0b0110),
        ("axchg", 5, 9, 9),
    ];
    for (op, old, operand, new) in cases {
        let mut m = machine(&[old, 0, 0, 0]);
        m.live = [true, false, false, false];
        m.set_reg_all(0, operand);
        run(&mut m, &format!("ATOM_RETURN.i32.slot0.{op}.wait0 @r1, @r0, r16, offset:0x0\nNOP.end")).unwrap();
        assert_eq!(ssbo(&m)[0], new, "{op}");
        assert_eq!(m.reg(1)[0], old, "{op} returns the old value");
        let mut m = machine(&[old, 0, 0, 0]);
        m.live = [true, false, false, false];
        m.set_reg_all(0, operand);
        run(&mut m, &format!("ATOM.i32.slot0.{op}.end @r0, r16, offset:0x0")).unwrap();
        assert_eq!(ssbo(&m)[0], new, "ATOM {op}");
    }
    let ones: [(&str, u32, u32); 5] =
        [("ainc", 7, 8), ("adec", 0, u32::MAX), ("aumax1", 0, 1), ("asmax1", (-4i32) as u32, 1), ("aor1", 6, 7)];
    for (op, old, new) in ones {
        let mut m = machine(&[0, old, 0, 0]);
        m.live = [true, false, false, false];
        run(&mut m, &format!("ATOM1_RETURN.i32.slot0.{op}.wait0 @r1, r16, offset:0x4\nNOP.end")).unwrap();
        assert_eq!((ssbo(&m)[1], m.reg(1)[0]), (new, old), "{op}");
    }
    // Compare-and-swap: staging {new, comparand}; all four lanes race in lane order.
    let mut m = machine(&[3, 0, 0, 0]);
    m.set_reg_all(0, 10);
    m.set_reg_lanes(1, [4, 3, 10, 3]);
    run(&mut m, "ATOM_RETURN.i32.slot0.compare.axchg.wait0 @r2, @r0:r1, r16, offset:0x0\nNOP.end").unwrap();
    assert_eq!(m.reg(2), [3, 3, 10, 10]);
    assert_eq!(ssbo(&m)[0], 10);
    // 64-bit.
    let mut m = machine(&[u32::MAX, 0, 0, 0]);
    m.live = [true, false, false, false];
    m.set_reg_all(0, 1);
    m.set_reg_all(1, 0);
    run(&mut m, "ATOM_RETURN.i64.slot0.aadd.wait0 @r2:r3, @r0:r1, r16, offset:0x0\nNOP.end").unwrap();
    assert_eq!(ssbo(&m)[..2], [0, 1]);
    assert_eq!([m.reg(2)[0], m.reg(3)[0]], [u32::MAX, 0]);
    // Without a result.
    let mut m = machine(&[0; 4]);
    run(&mut m, "ATOM1_RETURN.i32.slot0.ainc.end @, r16, offset:0x8").unwrap();
    assert_eq!(ssbo(&m)[2], 4);
}

#[test]
fn varying_and_attribute_formats() {
    let mut m = Machine::new(Stage::Fragment);
    m.set_reg_all(60, 1);
    m.set_reg_all(61, 1);
    let f = |x: f32| x.to_bits();
    m.env.varyings.push(VaryingData {
        offset: 32,
        flat: false,
        location: 1,
        values: [[f(1.0), f(0.1), f(-2.5), f(65519.0)]; 4],
    });
    run(
        &mut m,
        "LD_VAR_BUF_IMM.f16.slot0.v4.src_f32.centroid.store.wait0 @r0:r1, r61, index:0x20
LD_VAR_BUF_IMM.f32.slot1.v2.src_f16.centroid.retrieve.wait1 @r2:r3, r61, index:0x24
IADD_IMM.i32 r10, 0x0, #0x28
LD_VAR_BUF.f32.slot2.src_f32.centroid.retrieve.wait2 @r4, r61, r10
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.end",
    )
    .unwrap();
    let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
    assert_eq!(m.reg(0)[0], h(1.0) | h(0.1) << 16);
    assert_eq!(m.reg(1)[0], h(-2.5) | 0x7BFF << 16, "65519 rounds to the largest binary16");
    assert_eq!(m.reg(2)[0], f(half::f16::from_f32(0.1).to_f32()), "src_f16 passes through binary16");
    assert_eq!(m.reg(4)[0], f(-2.5));
    // The varying model (docs/emulator.md §3.5): a centroid varying read at the pixel centre
    // gives the same value (INTERP_* read varyings at other locations than declared).
    let mut c = Machine::new(Stage::Fragment);
    c.set_reg_all(60, 1);
    c.set_reg_all(61, 1);
    c.env.varyings = m.env.varyings.clone();
    run(
        &mut c,
        "LD_VAR_BUF_IMM.f32.slot0.src_f32.center.store.wait0 @r0, r61, index:0x20\nNOP.wait0126\n\
         ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0\nNOP.end",
    )
    .unwrap();
    assert_eq!(c.reg(0)[0], f(1.0));

    let mut v = Machine::new(Stage::Vertex);
    v.env.vertex_ids = [7, 8, 9, 10];
    v.set_reg_lanes(60, [7, 8, 9, 10]);
    v.set_reg_all(61, 0);
    v.env.attributes.insert(
        3,
        AttributeData {
            format: "f32".into(),
            values: std::array::from_fn(|l| [f(l as f32), f(0.5), f(3.0), 0x0001_2345]),
        },
    );
    run(
        &mut v,
        "LD_ATTR_IMM.v4.f16.slot0.wait0 @r0:r1, r60, r61, index:0x3, table:0x1
LD_ATTR_IMM.v2.u16.slot1.wait1 @r2, r60, r61, index:0x3, table:0x1
IADD_IMM.i32 r5, 0x0, #0x01000003
IADD_IMM.i32 r6, 0x0, #0x7
LD_ATTR.v4.auto.slot2.wait2 @r8:r9:r10:r11, r6, r61, r5
NOP.end",
    )
    .unwrap();
    assert_eq!(v.reg(0)[2], h(2.0) | h(0.5) << 16);
    assert_eq!(v.reg(1)[2], h(3.0) | h(f32::from_bits(0x0001_2345)) << 16);
    assert_eq!(v.reg(2)[1], f(1.0) & 0xFFFF | (f(0.5) & 0xFFFF) << 16);
    assert_eq!(v.reg(8), [0; 4], "vertex 7 is lane 0, for every lane");
    let mut d = v.clone();
    d.set_reg_lanes(5, [0x0100_0003, 0x0100_0003, 0x0100_0004, 0x0100_0003]);
    let e = run(&mut d, "LD_ATTR.v4.auto.slot2.end @r8:r9:r10:r11, r60, r61, r5").unwrap_err();
    assert!(e.message.contains("diverges"), "{e}");
    let e = run(
        &mut v,
        "IADD_IMM.i32 r6, 0x0, #0x63\nLD_ATTR_IMM.v4.f32.slot0.end @r0:r1:r2:r3, r6, r61, index:0x3, table:0x1",
    )
    .unwrap_err();
    assert!(e.message.contains("no vertex with ID 99"), "{e}");
}

/// A discarded (helper) lane skips a texture instruction with `skip`: its result registers get
/// the marker 0xDEAD5C1D; without `skip` it samples like any lane.
#[test]
fn discarded_lane_skips_texture_with_skip() {
    let mut m = Machine::new(Stage::Fragment);
    let tex = Texture {
        dim: Dim::D2,
        array: false,
        width: 4,
        height: 4,
        depth: 1,
        layers: 1,
        levels: 1,
        kind: TexelKind::Float,
        seed: 5,
        samples: 1,
    };
    m.env.textures.insert(2, tex.clone());
    m.set_reg_all(0, 0.3f32.to_bits());
    m.set_reg_all(1, 0.6f32.to_bits());
    m.set_reg_all(4, 0x2002_1802);
    m.set_reg_all(5, 0);
    m.set_reg_lanes(7, [1.0f32, -1.0, 1.0, 1.0].map(f32::to_bits));
    m.set_reg_all(60, 1);
    run(
        &mut m,
        "DISCARD.f32.lt r7, 0x0
TEX_SINGLE.slot0.skip.f.32.r.2d.zero.wait0 @r8, @r0:r1, r4
TEX_SINGLE.slot0.f.32.r.2d.zero.wait0 @r9, @r0:r1, r4
NOP.wait0126
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
NOP.end",
    )
    .unwrap();
    let texel = tex.sample(SampleCoords { s: 0.3, t: 0.6, ..SampleCoords::default() }, 0)[0];
    assert_eq!(m.reg(8), [texel, 0xDEAD_5C1D, texel, texel]);
    assert_eq!(m.reg(9), [texel; 4]);
}

#[test]
fn texture_packing_and_shadow() {
    let mut m = Machine::new(Stage::Compute);
    let tex = Texture {
        dim: Dim::D2,
        array: true,
        width: 4,
        height: 4,
        depth: 1,
        layers: 3,
        levels: 1,
        kind: TexelKind::Float,
        seed: 9,
        samples: 1,
    };
    m.env.textures.insert(2, tex.clone());
    let reference = f32::from_bits(tex.texel(0, 1, 1, 2, 0)[0]);
    m.set_reg_all(0, 0.3f32.to_bits());
    m.set_reg_all(1, 0.6f32.to_bits());
    m.set_reg_all(2, 1.4f32.to_bits());
    m.set_reg_lanes(3, [reference, reference + 0.25, reference - 0.25, 2.0].map(f32::to_bits));
    m.set_reg_all(4, 0x2002_1802);
    m.set_reg_all(5, 0);
    m.set_reg_all(6, 0x0300_0002);
    m.set_reg_all(7, 0x0400_0002);
    run(
        &mut m,
        "TEX_SINGLE.slot0.f.16.rgb.2d.array_enable.zero.wait0 @r8:r9, @r0:r1:r2, r4
TEX_SINGLE.slot1.f.32.r.2d.array_enable.shadow.zero.wait1 @r10, @r0:r1:r2:r3, r4
TEX_SINGLE.wide_indices.slot2.u.16.ga.2d.array_enable.zero.wait2 @r12, @r0:r1:r2, r6
NOP.end",
    )
    .unwrap();
    let coords = SampleCoords { s: 0.3, t: 0.6, layer: 1.4, ..SampleCoords::default() };
    let t = tex.sample(coords, 0);
    let h = |bits: u32| u32::from(half::f16::from_f32(f32::from_bits(bits)).to_bits());
    assert_eq!(m.reg(8)[0], h(t[0]) | h(t[1]) << 16);
    assert_eq!(m.reg(9)[0], h(t[2]));
    assert_eq!(m.reg(10), [1.0f32, 0.0, 1.0, 0.0].map(f32::to_bits), "reference <= texel passes");
    assert_eq!(m.reg(12)[0], (t[1] & 0xFFFF) | (t[3] & 0xFFFF) << 16, "u.16 keeps the low bits");
    // Mismatched dimension, array flag, unbound unit, bad handles.
    for (text, words) in [
        ("TEX_SINGLE.slot0.f.32.3d.array_enable.zero.end @r8:r9:r10:r11, @r0:r1:r2:r3, r4", "does not match"),
        ("TEX_SINGLE.slot0.f.32.2d.zero.end @r8:r9:r10:r11, @r0:r1, r4", "array_enable"),
        ("TEX_SINGLE.slot0.f.32.2d.array_enable.zero.end @r8:r9:r10:r11, @r0:r1, r4", "staging registers"),
        ("TEX_SINGLE.slot0.f.32.2d.array_enable.zero.end @r8:r9:r10:r11, @r0:r1:r2, r6", "high word"),
        ("TEX_SINGLE.wide_indices.slot0.f.32.2d.array_enable.zero.end @r8:r9:r10:r11, @r0:r1:r2, r4", "texture table"),
    ] {
        let e = run(&mut m, text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Fault, "{text}: {e}");
        assert!(e.message.contains(words), "{text}: {e}");
    }
    m.set_reg_all(4, 0x2005_1800);
    let e = run(&mut m, "TEX_SINGLE.slot0.f.32.2d.array_enable.zero.end @r8:r9:r10:r11, @r0:r1:r2, r4").unwrap_err();
    assert!(e.message.contains("texture unit 5 is not bound"), "{e}");
    let e =
        run(&mut m, "TEX_SINGLE.slot0.f.32.2d.array_enable.computed.end @r8:r9:r10:r11, @r0:r1:r2, r4").unwrap_err();
    assert!(e.message.contains("fragment quad"), "{e}");
}

#[test]
fn wmask_clper64_and_branch_halves() {
    let mut m = Machine::new(Stage::Compute);
    m.set_reg_lanes(0, [0, 5, 7, 0]);
    m.set_reg_lanes(2, [1, 2, 3, 4]);
    m.set_reg_lanes(3, [10, 20, 30, 40]);
    m.set_reg_lanes(4, [0x0001_0000, 0x0000_0001, 0, 0x0001_0001]);
    run(
        &mut m,
        "WMASK r1, r0
WMASK.subgroup2 r5, r0
CLPER.u64.subgroup4.xor r6, r2, 0x03020100.b33
BRANCHZ.eq.reconverge r4.h1, offset:1
IADD_IMM.i32.reconverge r8, 0x0, #0x1
NOP.end",
    )
    .unwrap();
    assert_eq!(m.reg(1), [0b0110; 4]);
    assert_eq!(m.reg(5), [0b10, 0b10, 0b01, 0b01]);
    assert_eq!(m.reg(6), [4, 3, 2, 1]);
    assert_eq!(m.reg(7), [40, 30, 20, 10]);
    assert_eq!(m.defined[0][8] & 3, 3, "lane 0 (h1 = 1) fell through");
    assert_eq!(m.defined[1][8] & 3, 0, "lane 1 (h1 = 0) branched over");
}

/// A compute machine with image 0 bound: a 4×2 R8G8B8A8_UNORM image.
fn image_machine() -> (Machine, tgsi2va::exec::image::Image) {
    use tgsi2va::exec::image::{Format, Image};
    let image = Image {
        dim: Dim::D2,
        array: false,
        format: Format::by_name("R8G8B8A8_UNORM").unwrap(),
        width: 4,
        height: 2,
        depth: 1,
        layers: 1,
        samples: 1,
        seed: 5,
    };
    let mut m = Machine::new(Stage::Compute);
    m.memory.map_image(0, image.clone()).unwrap();
    (m, image)
}

#[test]
fn image_loads_addresses_and_converted_stores() {
    use tgsi2va::emu::image::CONVERSION_TAG;
    use tgsi2va::emu::memory::{IMAGE_SINK, image_base};
    let (mut m, image) = image_machine();
    let initial = image.initial_data();
    m.set_reg_all(2, 1 | 1 << 16); // (1, 1): texel 5, byte 20
    m.set_reg_all(3, 4); // (4, 0): outside
    let one = 1.0f32.to_bits();
    for (r, v) in [(12, one), (13, 0.5f32.to_bits()), (14, (-1.0f32).to_bits()), (15, 0.2f32.to_bits())] {
        m.set_reg_all(r, v);
    }
    run(
        &mut m,
        "LD_TEX_IMM.v4.f32.slot0.wait0 @r4:r5:r6:r7, r2, 0x0, index:0x0, table:0x5
LEA_TEX_IMM.slot1.wait1 @r8:r9:r10, r2, 0x0, table:0x5, index:0x0
ST_CVT.slot2.v4.auto.wait2 @r12:r13:r14:r15, r8, r10, offset:0x0
LEA_TEX_IMM.slot1.wait1 @r16:r17:r18, r3, 0x0, table:0x5, index:0x0
ST_CVT.slot2.v4.auto.wait2 @r12:r13:r14:r15, r16, r18, offset:0x0
LD_TEX_IMM.v4.f32.slot0.wait0 @r20:r21:r22:r23, r3, 0x0, index:0x0, table:0x5
LD_TEX_IMM.v2.f16.slot0.wait0 @r24, r2, 0x0, index:0x0, table:0x5
NOP.end",
    )
    .unwrap();
    let before = image.format.unpack(&initial[20..24]);
    assert_eq!([m.reg(4)[0], m.reg(5)[0], m.reg(6)[0], m.reg(7)[0]], before, "the texel before the store");
    let address = image_base(0) + 20;
    assert_eq!([m.reg(8)[0], m.reg(9)[0]], [address as u32, (address >> 32) as u32]);
    assert_eq!(m.reg(10)[0], CONVERSION_TAG | u32::from(image.format.id()));
    let sink = image_base(0) + IMAGE_SINK;
    assert_eq!([m.reg(16)[0], m.reg(17)[0]], [sink as u32, (sink >> 32) as u32], "outside: the sink");
    let data = &m.memory.region(RegionKind::Image(0)).unwrap().data;
    assert_eq!(data[20..24], [255, 128, 0, 51], "UNORM packing of (1, 0.5, −1, 0.2)");
    assert_eq!(data[..20], initial[..20], "nothing else changed");
    assert_eq!(data[24..], initial[24..], "the store to the sink was dropped");
    assert_eq!([m.reg(20)[0], m.reg(21)[0], m.reg(22)[0], m.reg(23)[0]], [0; 4], "outside reads zero");
    // f16 registers: (1.0, 128/255 → f16) packed in one register.
    let half = half::f16::from_f32(128.0 / 255.0).to_bits() as u32;
    assert_eq!(m.reg(24)[0], 0x3C00 | half << 16);
}

#[test]
fn image_atomics_and_faults() {
    use tgsi2va::exec::image::{Format, Image};
    let mut m = Machine::new(Stage::Compute);
    let image = Image {
        dim: Dim::D1,
        array: true,
        format: Format::by_name("R32_UINT").unwrap(),
        width: 4,
        height: 1,
        depth: 1,
        layers: 2,
        samples: 1,
        seed: 1,
    };
    m.memory.map_image(3, image.clone()).unwrap();
    m.live = [true, false, false, false];
    m.set_reg_all(2, 1); // x 1
    m.set_reg_all(3, 1 << 16); // layer 1 → texel 5
    m.set_reg_all(4, 2 << 16); // layer 2: outside
    m.set_reg_all(0, 7);
    m.set_reg_all(1, 0x0500_0003); // handle of image 3
    run(
        &mut m,
        "LEA_TEX.slot0.wait0 @r8:r9:r10, r2, r3, r1
ATOM_RETURN.i32.slot1.aadd.wait1 @r11, @r0, r8, offset:0x0
LEA_TEX.slot0.wait0 @r12:r13:r14, r2, r4, r1
ATOM_RETURN.i32.slot1.aadd.wait1 @r15, @r0, r12, offset:0x0
NOP.end",
    )
    .unwrap();
    let initial = tgsi2va::exec::bytes_to_words(&image.initial_data());
    let words = tgsi2va::exec::bytes_to_words(&m.memory.region(RegionKind::Image(3)).unwrap().data);
    assert_eq!(m.reg(11)[0], initial[5], "the old texel");
    assert_eq!(words[5], initial[5].wrapping_add(7));
    assert_eq!(m.reg(15)[0], 0, "an atomic outside the image returns 0");
    assert_eq!(words.iter().enumerate().filter(|(i, w)| **w != initial[*i]).count(), 1);
    let faults = [
        ("LD_TEX_IMM.v4.f32.slot0.end @r4:r5:r6:r7, r2, 0x0, index:0x0, table:0x4", "table 5"),
        ("LD_TEX_IMM.v4.f32.slot0.end @r4:r5:r6:r7, r2, 0x0, index:0x1, table:0x5", "not bound"),
        ("ST_CVT.slot0.v4.auto.end @r4:r5:r6:r7, r8, r0, offset:0x0", "conversion descriptor"),
    ];
    for (text, word) in faults {
        let mut m = m.clone();
        m.set_reg_all(8, 0);
        let e = run(&mut m, text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Fault, "{text}: {e}");
        assert!(e.message.contains(word), "{text}: {e}");
    }
    let mut m2 = m.clone();
    let e = run(&mut m2, "LD_TEX.v4.f32.slot0.end @r4:r5:r6:r7, r2, r3, r1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported, "f32 registers from a UINT image: {e}");
}
