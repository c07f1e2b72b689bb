//! Whole blobs with hand-written metadata, one per stage path of docs/metadata.md, run through
//! `emu::run`: fragment varyings → ATEST → ZS_EMIT → BLEND, vertex attributes → IDVS position,
//! point size and varying stores, compute preloads → shared memory → SSBO stores and atomics,
//! texturing (sampling, fetch, gather, gradients, cube maps), UBO/TLS memory, and the CLI.

#![allow(clippy::needless_range_loop)] // lanes are indexed in parallel arrays

use tgsi2va::emit::meta::{
    Attribute, FauSource, FauWord, Metadata, Output, SystemValue, TextureBinding, Variant, Varying,
};
use tgsi2va::emu::{self, ErrorKind};
use tgsi2va::exec::LANES;
use tgsi2va::exec::io::{Inputs, Outputs, RegKey};
use tgsi2va::exec::texture::{Dim, SampleCoords, TexelKind, Texture, cube_project};
use tgsi2va::tgsi::ast::File;
use tgsi2va::valhall::assemble;

/// Assembles variants into one blob with the padding of docs/metadata.md.
fn blob(sources: &[(&str, &str, &[u8])]) -> (Vec<u8>, Vec<Variant>) {
    let mut bytes = Vec::new();
    let mut variants = Vec::new();
    for (name, text, preload) in sources {
        let words = assemble(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let offset = bytes.len() as u32;
        for w in &words {
            bytes.extend(w.to_le_bytes());
        }
        let size = 8 * words.len() as u32;
        let padded = (bytes.len() + 16).div_ceil(128) * 128;
        bytes.resize(padded, 0);
        variants.push(Variant {
            name: name.to_string(),
            offset,
            size,
            work_registers: 64,
            preload: preload.to_vec(),
            ..Variant::default()
        });
    }
    (bytes, variants)
}

fn meta(stage: &str, variants: Vec<Variant>) -> Metadata {
    Metadata {
        format_version: 1,
        stage: stage.into(),
        gpu: "Mali-G57".into(),
        arch: 9,
        variants,
        ..Metadata::default()
    }
}

fn reg(name: &str) -> RegKey {
    RegKey::parse(name).unwrap()
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn lanes_f(v: [[f32; 4]; LANES]) -> [[u32; 4]; LANES] {
    v.map(|l| l.map(f32::to_bits))
}

fn output(name: &str, semantic: &str, kind: &str, rt: Option<u32>) -> Output {
    Output { register: name.into(), semantic: semantic.into(), kind: kind.into(), rt }
}

fn varying(register: &str, semantic: &str, offset: u32, interpolation: &str) -> Varying {
    Varying {
        register: register.into(),
        semantic: semantic.into(),
        offset,
        components: 4,
        interpolation: interpolation.into(),
        location: "center".into(),
    }
}

const FS_TWO_TARGETS: &str = "
LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store.wait0 @r0:r1:r2:r3, r61, index:0x0
LD_VAR_BUF_IMM.f32.slot1.v2.src_flat32.center.store.wait1 @r4:r5, r61, index:0x10
FMA.f32 r8, r0, r4, r1
MOV.i32 r9, r5
FADD.f32.wait0126 r10, r3, 0x0
ATEST.wait0 @r60, r60, r10, atest_datum.w0
MOV.i32.wait r0, r8
BLEND.slot0.v4.auto @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x2
IADD_IMM.i32 r48, program_counter.w0, #0x8
BRANCHZI.eq.absolute 0x0, blend_descriptor_0.w1
MOV.i32 r0, r9
MOV.i32 r1, r4
MOV.i32 r2, r4
MOV.i32.wait r3, r4
BLEND.slot1.v4.auto.end @r0:r1:r2:r3, blend_descriptor_1.w0, r60, target:0x0
IADD_IMM.i32 r48, 0x0, #0x0
BRANCHZI.eq.absolute 0x0, blend_descriptor_1.w1
";

#[test]
fn fragment_varyings_atest_blend() {
    let (bytes, variants) = blob(&[("main", FS_TWO_TARGETS, &[60, 61])]);
    let mut m = meta("fragment", variants);
    m.varyings = vec![varying("IN[0]", "GENERIC[0]", 0, "perspective"), varying("IN[1]", "GENERIC[1]", 16, "flat")];
    m.outputs = vec![output("OUT[0]", "COLOR", "color", Some(0)), output("OUT[1]", "COLOR[1]", "color", Some(1))];
    let mut inputs = Inputs::default();
    let in0 = [[1.0, 2.0, 3.0, 0.5], [-1.0, 0.25, 0.0, 1.0], [8.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5]];
    let in1 = [[2.0, 7.0, 0.0, 0.0], [3.0, 6.0, 0.0, 0.0], [4.0, 5.0, 0.0, 0.0], [5.0, 4.0, 0.0, 0.0]];
    inputs.registers.insert(reg("IN[0]"), lanes_f(in0));
    inputs.registers.insert(reg("IN[1]"), lanes_f(in1));
    let out = emu::run(&bytes, &m, &inputs).unwrap_or_else(|e| panic!("{e}"));
    for l in 0..LANES {
        let c0 = out.outputs[&reg("OUT[0]")][l];
        assert_eq!(c0, [f(in0[l][0].mul_add(in1[l][0], in0[l][1])), f(in0[l][1]), f(in0[l][2]), f(in0[l][3])]);
        let c1 = out.outputs[&reg("OUT[1]")][l];
        assert_eq!(c1, [f(in1[l][1]), f(in1[l][0]), f(in1[l][0]), f(in1[l][0])]);
    }
    assert!(out.killed.is_empty());
}

#[test]
fn fragment_discard_depth_and_special_varyings() {
    let text = "
LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store.wait0 @r0:r1:r2:r3, r61, index:0x0
DISCARD.f32.lt r0, 0x0
LD_VAR_SPECIAL.v2.f32.center.clobber.slot1.wait1 @r4:r5, r61, index:0x2
U16_TO_F32 r6, r59.h00
U16_TO_F32 r7, r59.h10
ICMP_OR.u32.eq.m1 r8, r58, 0x0, 0x0
MOV.i32 r1, r6
MOV.i32 r2, r7
MOV.i32.wait0126 r3, r8
ATEST.wait0 @r60, r60, 0x3F800000, atest_datum.w0
FADD.f32.wait0126 r9, r5, r4
ZS_EMIT.z.slot0.wait0 @r60, r9, 0x0, r60
NOP.wait
BLEND.slot0.v4.auto.end @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x0
";
    let (bytes, variants) = blob(&[("main", text, &[58, 59, 60, 61])]);
    let mut m = meta("fragment", variants);
    m.varyings = vec![varying("IN[1]", "GENERIC[0]", 0, "perspective")];
    m.system_values = vec![
        SystemValue { register: "IN[0]".into(), semantic: "POSITION".into(), source: "special".into() },
        SystemValue { register: "IN[2]".into(), semantic: "FACE".into(), source: "preload".into() },
    ];
    m.outputs = vec![output("OUT[0]", "COLOR", "color", Some(0)), output("OUT[1]", "POSITION", "depth", None)];
    m.flags.can_discard = true;
    m.flags.writes_depth = true;
    let mut inputs = Inputs::default();
    let pos = [[0.5, 0.5, 0.25, 2.0], [1.5, 0.5, 0.5, 4.0], [0.5, 1.5, 0.75, 1.0], [7.5, 3.5, 1.0, 0.5]];
    inputs.registers.insert(reg("IN[0]"), lanes_f(pos));
    inputs.registers.insert(reg("IN[1]"), lanes_f([[1.0; 4], [-1.0; 4], [2.0; 4], [3.0; 4]]));
    inputs.registers.insert(reg("IN[2]"), lanes_f([[1.0; 4], [1.0; 4], [-1.0; 4], [1.0; 4]]));
    let out = emu::run(&bytes, &m, &inputs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.killed, vec![1]);
    // Lane 1 ran on through ATEST, ZS_EMIT and BLEND as a helper: its outputs are dropped.
    assert_eq!(out.outputs[&reg("OUT[0]")][1], [0; 4]);
    assert_eq!(out.outputs[&reg("OUT[1]")][1], [0; 4]);
    for l in [0usize, 2, 3] {
        let colour = out.outputs[&reg("OUT[0]")][l];
        assert_eq!(colour[1], f(pos[l][0].floor()), "pixel x from r59");
        assert_eq!(colour[2], f(pos[l][1].floor()));
        assert_eq!(colour[3], if l == 2 { 0 } else { u32::MAX }, "front facing");
        assert_eq!(out.outputs[&reg("OUT[1]")][l], [0, 0, f(pos[l][2] + pos[l][3]), 0], "depth = z + w");
    }
    let json = out.to_json();
    assert_eq!(Outputs::from_json(&json).unwrap(), out);
}

const VS_POSITION: &str = "
LD_ATTR_IMM.v4.f32.slot0.wait0 @r0:r1:r2:r3, r60, r61, index:0x0, table:0x1
LEA_BUF_IMM.slot1.wait1 @r8:r9, r59, table:0xD, index:0x0
FRCP.f32 r4, r3
FMA.f32 r0, r0, r4, 0x0.neg
FMA.f32 r0, r0, u0, u1
STORE.i128.istream.slot2 @r0:r1:r2:r3, r8, offset:0
IADD_IMM.i32 r10, r59, #0x4
LEA_BUF_IMM.slot0.wait0 @r12:r13, r10, table:0xD, index:0x0
V2F32_TO_V2F16 r14, r4, r4
STORE.i16.istream.slot1 @r14, r12, offset:0
STORE.i8.istream.slot0.end @r60, r12, offset:2
";

const VS_NO_PSIZ: &str = "
LD_ATTR_IMM.v4.f32.slot0.wait0 @r0:r1:r2:r3, r60, r61, index:0x0, table:0x1
LEA_BUF_IMM.slot1.wait1 @r8:r9, r59, table:0xD, index:0x0
FRCP.f32 r4, r3
FMA.f32 r0, r0, r4, 0x0.neg
FMA.f32 r0, r0, u0, u1
STORE.i128.istream.slot2 @r0:r1:r2:r3, r8, offset:0
IADD_IMM.i32 r10, r59, #0x4
LEA_BUF_IMM.slot0.wait0 @r12:r13, r10, table:0xD, index:0x0
STORE.i8.istream.slot0.end @r60, r12, offset:2
";

const VS_VARYING: &str = "
LD_ATTR_IMM.v4.f32.slot0 @r4:r5:r6:r7, r60, r61, index:0x1, table:0x1
LEA_BUF_IMM.slot1.wait01 @r8:r9, r59, table:0xD, index:0x0
FADD.f32 r4, r4, r4
STORE.i128.estream.slot2 @r4:r5:r6:r7, r8, offset:16
STORE.i32.estream.slot2.end @r61, r8, offset:0
";

fn vertex_meta(variants: Vec<Variant>) -> Metadata {
    let mut m = meta("vertex", variants);
    m.fau = vec![
        FauWord { word: 0, source: FauSource::Sysval { name: "viewport_scale".into(), component: 0 } },
        FauWord { word: 1, source: FauSource::Sysval { name: "viewport_offset".into(), component: 0 } },
    ];
    m.attributes = vec![
        Attribute { index: 0, register: "IN[0]".into(), format: "f32".into(), components: 4 },
        Attribute { index: 1, register: "IN[1]".into(), format: "f32".into(), components: 4 },
    ];
    m.outputs = vec![
        output("OUT[0]", "POSITION", "position", None),
        output("OUT[2]", "PSIZE", "point_size", None),
        output("OUT[3]", "LAYER", "layer", None),
    ];
    m.varyings = vec![varying("OUT[1]", "GENERIC[0]", 16, "perspective"), varying("OUT[4]", "GENERIC[5]", 0, "flat")];
    m.system_values =
        vec![SystemValue { register: "SV[0]".into(), semantic: "VERTEXID".into(), source: "preload".into() }];
    m.flags.writes_point_size = true;
    m
}

#[test]
fn vertex_attributes_to_idvs_records() {
    let (bytes, variants) = blob(&[
        ("position", VS_POSITION, &[59, 60, 61]),
        ("varying", VS_VARYING, &[59, 60, 61]),
        ("position_no_psiz", VS_NO_PSIZ, &[59, 60, 61]),
    ]);
    let m = vertex_meta(variants);
    let mut inputs = Inputs::default();
    let pos = [[1.0, 2.0, 3.0, 2.0], [4.0, 5.0, 6.0, 4.0], [-1.0, 0.0, 0.5, 1.0], [9.0, 9.0, 9.0, 0.5]];
    let colour = [[0.25, 0.5, 0.75, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]];
    inputs.registers.insert(reg("IN[0]"), lanes_f(pos));
    inputs.registers.insert(reg("IN[1]"), lanes_f(colour));
    // Vertex IDs are not the lane numbers: the attribute fetch must find the right vertex.
    inputs.registers.insert(reg("SV[0]"), [[10, 0, 0, 0], [11, 0, 0, 0], [12, 0, 0, 0], [13, 0, 0, 0]]);
    let out = emu::run(&bytes, &m, &inputs).unwrap_or_else(|e| panic!("{e}"));
    for l in 0..LANES {
        let w = 1.0 / pos[l][3];
        assert_eq!(
            out.outputs[&reg("OUT[0]")][l],
            [f((pos[l][0] * w).mul_add(1.0, 0.0)), f(pos[l][1]), f(pos[l][2]), f(pos[l][3])]
        );
        let psiz = half::f16::from_f32(w).to_f32();
        assert_eq!(out.outputs[&reg("OUT[2]")][l], [f(psiz), 0, 0, 0]);
        assert_eq!(out.outputs[&reg("OUT[3]")][l], [10 + l as u32, 0, 0, 0], "low byte of the vertex ID");
        let c = colour[l];
        assert_eq!(out.outputs[&reg("OUT[1]")][l], [f(c[0] + c[0]), f(c[1]), f(c[2]), f(c[3])]);
        assert_eq!(out.outputs[&reg("OUT[4]")][l], [0, 0, 0, 0], "instance ID 0 stored at offset 0");
    }
}

#[test]
fn vertex_variants_must_agree() {
    // A position_no_psiz variant that stores a different position is reported.
    let wrong = VS_NO_PSIZ.replace("FMA.f32 r0, r0, u0, u1", "FMA.f32 r0, r0, u0, 0x3F800000");
    let (bytes, variants) = blob(&[
        ("position", VS_POSITION, &[59, 60, 61]),
        ("varying", VS_VARYING, &[59, 60, 61]),
        ("position_no_psiz", &wrong, &[59, 60, 61]),
    ]);
    let m = vertex_meta(variants);
    let mut inputs = Inputs::default();
    inputs.registers.insert(reg("IN[0]"), lanes_f([[1.0, 2.0, 3.0, 1.0]; LANES]));
    let e = emu::run(&bytes, &m, &inputs).unwrap_err();
    assert!(e.message.contains("position_no_psiz"), "{e}");
    // The varying variant may not write the position stream.
    let (bytes, variants) = blob(&[
        ("position", VS_POSITION, &[59, 60, 61]),
        ("varying", &VS_VARYING.replace("estream.slot2 @r4", "istream.slot2 @r4"), &[59, 60, 61]),
    ]);
    let e = emu::run(&bytes, &vertex_meta(variants), &inputs).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fault, "{e}");
}

fn compute_meta(variants: Vec<Variant>) -> Metadata {
    let mut m = meta("compute", variants);
    m.system_values = vec![
        SystemValue { register: "SV[0]".into(), semantic: "THREAD_ID".into(), source: "preload".into() },
        SystemValue { register: "SV[1]".into(), semantic: "BLOCK_ID".into(), source: "preload".into() },
    ];
    m.ssbos = vec![0];
    m.local_size = Some([2, 2, 1]);
    m
}

fn compute_inputs(words: usize) -> Inputs {
    let mut inputs = Inputs::default();
    inputs.registers.insert(reg("SV[0]"), [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]]);
    inputs.registers.insert(reg("SV[1]"), [[3, 0, 0, 0]; LANES]);
    inputs.buffers.insert(0, vec![0; words]);
    inputs
}

#[test]
fn compute_preloads_shared_memory_barrier_and_ssbo() {
    let text = "
U16_TO_U32 r0, r55.h00
U16_TO_U32 r20, r55.h10
LSHIFT_OR.i32 r21, r20, 0x03020100.b11, 0x0
IADD.u32 r0, r0, r21
LSHIFT_OR.i32 r1, r0, 0x03020100.b22, 0x0
IADD.s32 r2, workgroup_local_pointer.w0, r1
MOV.i32 r3, workgroup_local_pointer.w1
IADD_IMM.i32 r4, r0, #0x64
STORE.i32.slot0.wait0 @r4, r2, offset:0
BARRIER.slot7.wait
IADD_IMM.i32 r6, 0x0, #0x4
LSHIFT_XOR.i32 r5, r1, 0x0.b00, r6
IADD.s32 r10, workgroup_local_pointer.w0, r5
MOV.i32 r11, workgroup_local_pointer.w1
LOAD.i32.unsigned.slot0.wait0 @r12, r10, offset:0
IADD_IMM.i32 r13, 0x0, #0x06000000
LEA_BUFFER.slot1.wait1 @r16:r17, r1, r13
STORE.i32.slot2.wait2 @r12, r16, offset:0
IADD_IMM.i32 r14, 0x0, #0x40
LEA_BUFFER.slot1.wait1 @r22:r23, r14, r13
IADD_IMM.i32 r18, 0x0, #0x1
ATOM_RETURN.i32.slot0.aadd.wait0 @r19, @r18, r22, offset:0x0
STORE.i32.slot1.wait1 @r19, r16, offset:0x20
STORE.i32.slot2.end @r60, r16, offset:0x30
";
    let (bytes, variants) = blob(&[("main", text, &[55, 56, 57, 58, 59, 60, 61, 62])]);
    let mut m = compute_meta(variants);
    m.wls_size = 16;
    let out = emu::run(&bytes, &m, &compute_inputs(20)).unwrap_or_else(|e| panic!("{e}"));
    let buf = &out.buffers[&0];
    for l in 0..LANES {
        // Lane l is local invocation l (x = l & 1, y = l >> 1); workgroup 3 of size 2×2.
        assert_eq!(buf[l], 100 + (l as u32 ^ 1), "shared memory after the barrier, lane {l}");
        assert_eq!(buf[8 + l], l as u32, "atomics run in lane order: old value of lane {l}");
        assert_eq!(buf[12 + l], 6 + (l as u32 & 1), "global invocation x = 3·2 + local x");
    }
    assert_eq!(buf[16], 4, "four atomic increments");
}

#[test]
fn ubo_tls_and_faults() {
    let text = "
IADD_IMM.i32 r0, 0x0, #0x20
LD_BUFFER.i128.unsigned.slot0.wait0 @r4:r5:r6:r7, r0, 0x0
IADD_IMM.i32 r1, 0x0, #0x1
LD_BUFFER.i32.unsigned.slot1.wait1 @r8, r0, r1
STORE.i128.force.slot0.wait0 @r4:r5:r6:r7, thread_local_pointer.w0, offset:0x10
LOAD.i32.unsigned.slot1.wait1 @r9, thread_local_pointer.w0, offset:0x14
FADD.f32 r10, r9, r8
IADD_IMM.i32 r13, 0x0, #0x06000000
MOV.i32 r14, lane_id.w0
LSHIFT_OR.i32 r14, r14, 0x03020100.b22, 0x0
LEA_BUFFER.slot1.wait1 @r16:r17, r14, r13
STORE.i32.slot2.end @r10, r16, offset:0
";
    let (bytes, variants) = blob(&[("main", text, &[])]);
    let mut m = compute_meta(variants);
    m.tls_size = 32;
    m.ubos = vec![0, 1];
    m.fau = vec![];
    let mut inputs = compute_inputs(4);
    inputs.registers.insert(RegKey::with_dimension(File::Const, 0, 2), [[f(1.0), f(2.0), f(3.0), f(4.0)]; LANES]);
    inputs.registers.insert(RegKey::with_dimension(File::Const, 1, 2), [[f(0.5), 0, 0, 0]; LANES]);
    let out = emu::run(&bytes, &m, &inputs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.buffers[&0], vec![f(2.5); 4]);
    // A buffer load through a handle of a table that holds no buffers is a fault naming the
    // instruction (loads past the end read zeros; see emu_messages).
    let bad = "IADD_IMM.i32 r13, 0x0, #0x07000000\nIADD_IMM.i32 r14, 0x0, #0x10\nLD_BUFFER.i32.unsigned.slot0.end @r8, r14, r13";
    let (bytes, variants) = blob(&[("main", bad, &[])]);
    let e = emu::run(&bytes, &compute_meta(variants), &compute_inputs(4)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fault);
    assert_eq!(e.index, Some(2));
    assert!(e.to_string().contains("LD_BUFFER.i32"), "{e}");
    // TLS accesses may not cross 16 bytes.
    let bad = "IADD_IMM.i32 r0, 0x0, #0x1\nMOV.i32 r1, r0\nSTORE.i64.force.slot0.end @r0:r1, thread_local_pointer.w0, offset:0xC";
    let (bytes, variants) = blob(&[("main", bad, &[])]);
    let mut m = compute_meta(variants);
    m.tls_size = 32;
    let e = emu::run(&bytes, &m, &compute_inputs(4)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fault);
    assert!(e.message.contains("crosses a 16-byte boundary"), "{e}");
}

fn texture_meta(stage: &str, variants: Vec<Variant>, target: &str) -> Metadata {
    let mut m = meta(stage, variants);
    m.textures = vec![TextureBinding { unit: 0, target: target.into(), return_type: None }];
    m
}

#[test]
fn texture_sample_and_fetch_in_compute() {
    let text = "
IADD_IMM.i32 r2, 0x0, #0x20001800
MOV.i32 r3, 0x0
TEX_SINGLE.slot0.f.32.2d.zero.wait0 @r4:r5:r6:r7, @r0:r1, r2
IADD_IMM.i32 r10, 0x0, #0x1000000
TEX_FETCH.slot1.f.32.2d.texel_offset.wait1 @r12:r13:r14:r15, @r8:r9:r10, r2
MOV.i32 r28, r0
MOV.i32 r29, r1
TEX_SINGLE.slot2.f.32.gb.2d.explicit.wait2 @r16:r17, @r28:r29:r30, r2
TEX_GATHER.slot0.f.32.2d.gather4_b.wait0 @r20:r21:r22:r23, @r0:r1, r2
IADD_IMM.i32 r32, 0x0, #0x06000000
MOV.i32 r33, lane_id.w0
LSHIFT_OR.i32 r33, r33, 0x7060504.b22, 0x0
LEA_BUFFER.slot1.wait1 @r24:r25, r33, r32
STORE.i128.slot0.wait0 @r4:r5:r6:r7, r24, offset:0
STORE.i128.slot1.wait1 @r12:r13:r14:r15, r24, offset:16
STORE.i64.slot2.wait2 @r16:r17, r24, offset:32
STORE.i128.slot0.end @r20:r21:r22:r23, r24, offset:48
";
    let (bytes, variants) = blob(&[("main", text, &[])]);
    let mut m = texture_meta("compute", variants, "2D");
    m.ssbos = vec![0];
    let mut inputs = Inputs::default();
    inputs.buffers.insert(0, vec![0; 64]);
    inputs.textures.insert(
        0,
        Texture {
            dim: Dim::D2,
            array: false,
            width: 8,
            height: 4,
            depth: 1,
            layers: 1,
            levels: 0,
            kind: TexelKind::Float,
            seed: 5,
            samples: 1,
        },
    );
    let st = [[0.1f32, 0.9], [0.5, 0.5], [0.99, 0.01], [-1.0, 3.0]];
    let ij = [[0u32, 0], [1, 2], [3, 1], [4, 0]];
    let lod = [0x100u32, 0xFFFF_FF00, 0x200, 0x180];
    // The coordinates are registers of a prepared machine (no TGSI input holds them).
    let program = emu::load_variant(&bytes, &m.variants[0]).unwrap();
    let mut machine = emu::prepare(&m, &inputs, emu::Stage::Compute, &m.variants[0], emu::Options::default()).unwrap();
    machine.set_reg_lanes(0, st.map(|v| f(v[0])));
    machine.set_reg_lanes(1, st.map(|v| f(v[1])));
    machine.set_reg_lanes(8, ij.map(|v| v[0]));
    machine.set_reg_lanes(9, ij.map(|v| v[1]));
    machine.set_reg_lanes(30, lod);
    machine.run(&program).unwrap_or_else(|e| panic!("{e}"));
    let tex = &inputs.textures[&0];
    let region = machine.memory.region(emu::memory::RegionKind::Ssbo(0)).unwrap();
    let words = emu::memory::bytes_to_words(&region.data);
    for l in 0..LANES {
        let base = 16 * l;
        let coords = SampleCoords { s: st[l][0], t: st[l][1], ..SampleCoords::default() };
        assert_eq!(words[base..base + 4], tex.sample(coords, 0), "TEX_SINGLE lane {l}");
        assert_eq!(
            words[base + 4..base + 8],
            tex.texel(1, 0, ij[l][0] as i32, ij[l][1] as i32, 0),
            "TEX_FETCH lane {l}"
        );
        let s = tex.sample(coords, lod[l] as u16 as i16 as i32);
        assert_eq!(words[base + 8..base + 10], [s[1], s[2]], "write mask gb, explicit LOD lane {l}");
        assert_eq!(words[base + 12..base + 16], tex.gather(coords, 2), "TEX_GATHER lane {l}");
    }
}

#[test]
fn texture_computed_lod_cube_and_gradients_in_fragment() {
    // Cube sequence of §C.12.5 with implicit LOD, then TXD through TEX_GRADIENT + grdesc.
    let text = "
LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store.wait0 @r0:r1:r2:r3, r61, index:0x0
CUBEFACE1    r3, r0, r1, r2
CUBEFACE2_V9 r4, r0, r1, r2
CUBE_SSEL    r5, r2, r0, r4
CUBE_TSEL    r6, r1, r2, r4
FRCP.f32     r3, r3
FMA.f32      r3, r3, 0x38000000.h1, 0x0.neg
FMA.f32.clamp_0_1 r5, r3, r5, 0x38000000.h1
FMA.f32.clamp_0_1 r13, r3, r6, 0x38000000.h1
IADD_IMM.i32 r7, 0x0, #0x1FFFFFFF
MUX.i32.bit  r12, r5, r4, r7
IADD_IMM.i32 r14, 0x0, #0x20001800
MOV.i32 r15, 0x0
TEX_SINGLE.slot1.f.32.cube.computed.wait1 @r8:r9:r10:r11, @r12:r13, r14
IADD_IMM.i32 r16, 0x0, #0x20011801
MOV.i32 r17, 0x0
LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store.wait0 @r20:r21:r22:r23, r61, index:0x10
TEX_GRADIENT.slot0.u.32.rg.2d.wait0 @r26:r27, @r20:r21:r22:r23, r16
MOV.i32 r24, r0
MOV.i32 r25, r1
TEX_SINGLE.slot1.f.32.2d.grdesc.wait1 @r4:r5:r6:r7, @r24:r25:r26:r27, r16
MOV.i32.wait0126 r28, r11
ATEST.wait0 @r60, r60, r28, atest_datum.w0
MOV.i32 r0, r8
MOV.i32 r1, r9
MOV.i32 r2, r10
MOV.i32.wait r3, r11
BLEND.slot0.v4.auto @r0:r1:r2:r3, blend_descriptor_0.w0, r60, target:0x0
MOV.i32 r0, r4
MOV.i32 r1, r5
MOV.i32 r2, r6
MOV.i32.wait r3, r7
BLEND.slot1.v4.auto.end @r0:r1:r2:r3, blend_descriptor_1.w0, r60, target:0x0
";
    let mut words = assemble(text).unwrap();
    // derivative_enable (15), lod_clamp_disable (14), lod_bias_disable (13) on TEX_GRADIENT:
    // the text form cannot express them.
    let i = words.iter().position(|w| (w >> 48) & 0x1FF == 0x12A).unwrap();
    words[i] |= (1 << 15) | (1 << 14) | (1 << 13);
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let size = bytes.len() as u32;
    bytes.resize((bytes.len() + 16).div_ceil(128) * 128, 0);
    let variant = Variant {
        name: "main".into(),
        offset: 0,
        size,
        work_registers: 64,
        preload: vec![60, 61],
        ..Variant::default()
    };
    let mut m = texture_meta("fragment", vec![variant], "CUBE");
    m.textures.push(TextureBinding { unit: 1, target: "2D".into(), return_type: None });
    m.varyings =
        vec![varying("IN[0]", "GENERIC[0]", 0, "perspective"), varying("IN[1]", "GENERIC[1]", 16, "perspective")];
    m.outputs = vec![output("OUT[0]", "COLOR", "color", Some(0)), output("OUT[1]", "COLOR[1]", "color", Some(1))];
    m.flags.needs_helper_threads = true;
    let dirs = [[1.0f32, 0.1, 0.2, 0.0], [1.0, 0.15, 0.2, 0.0], [1.0, 0.1, 0.3, 0.0], [-0.2, 0.3, -2.0, 0.0]];
    let grads = [[0.01f32, 0.0, 0.0, 0.02], [0.1, 0.0, 0.0, 0.1], [0.0, 0.3, 0.2, 0.0], [1.0, 1.0, 1.0, 1.0]];
    let mut inputs = Inputs::default();
    inputs.registers.insert(reg("IN[0]"), lanes_f(dirs));
    inputs.registers.insert(reg("IN[1]"), lanes_f(grads));
    let out = emu::run(&bytes, &m, &inputs).unwrap_or_else(|e| panic!("{e}"));
    let cube = Texture::default_for(Dim::Cube, false, TexelKind::Float, 0);
    let quad: [[f32; 3]; 4] = std::array::from_fn(|l| {
        let (_, s, t) = cube_project(dirs[l][0], dirs[l][1], dirs[l][2]);
        [s, t, 0.0]
    });
    let lod = cube.implicit_lod(&quad);
    let tex2d = Texture::default_for(Dim::D2, false, TexelKind::Float, 1);
    for l in 0..LANES {
        let (face, s, t) = cube_project(dirs[l][0], dirs[l][1], dirs[l][2]);
        let want = cube.sample(SampleCoords { s, t, face, ..SampleCoords::default() }, lod);
        assert_eq!(out.outputs[&reg("OUT[0]")][l], want, "cube lane {l}");
        let g = grads[l];
        let glod = tex2d.gradient_lod([g[0], g[2], 0.0], [g[1], g[3], 0.0]);
        let coords = SampleCoords { s: dirs[l][0], t: dirs[l][1], ..SampleCoords::default() };
        assert_eq!(out.outputs[&reg("OUT[1]")][l], tex2d.sample(coords, glod), "TXD lane {l}");
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tgsi2va-emu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn cli_runs_a_blob() {
    let dir = temp_dir("cli");
    let (bytes, variants) = blob(&[("main", FS_TWO_TARGETS, &[60, 61])]);
    let mut m = meta("fragment", variants);
    m.varyings = vec![varying("IN[0]", "GENERIC[0]", 0, "perspective"), varying("IN[1]", "GENERIC[1]", 16, "flat")];
    m.outputs = vec![output("OUT[0]", "COLOR", "color", Some(0)), output("OUT[1]", "COLOR[1]", "color", Some(1))];
    std::fs::write(dir.join("s.bin"), &bytes).unwrap();
    std::fs::write(dir.join("s.json"), m.to_json()).unwrap();
    std::fs::write(dir.join("in.json"), r#"{"IN[0]": [1, 2, 3, 4], "IN[1]": [2, 0.5, 0, 0]}"#).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tgsi2va")).args(args).current_dir(&dir).output().unwrap()
    };
    let ok = run(&["emu", "s.bin", "--meta", "s.json", "--inputs", "in.json"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let outputs = Outputs::from_json(&String::from_utf8(ok.stdout).unwrap()).unwrap();
    assert_eq!(outputs.outputs[&reg("OUT[0]")][3], [f(4.0), f(2.0), f(3.0), f(4.0)]);
    // The metadata defaults to BLOB.json.
    let ok = run(&["emu", "s.bin"]);
    assert!(ok.status.success());
    // Emulation errors: exit 1 and a message naming the instruction.
    let bad: Vec<u8> = bytes.iter().enumerate().map(|(i, &b)| if (8..16).contains(&i) { 0xFF } else { b }).collect();
    std::fs::write(dir.join("bad.bin"), &bad).unwrap();
    let e = run(&["emu", "bad.bin", "--meta", "s.json"]);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("instruction 1"), "{}", String::from_utf8_lossy(&e.stderr));
    // Usage errors: exit 2.
    assert_eq!(run(&["emu"]).status.code(), Some(2));
    assert_eq!(run(&["emu", "-"]).status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiled KILL and DEMOTE followed by derivatives and a ballot agree with the interpreter:
/// the emulator keeps the discarded lane as a helper until the compiler's `.discard` point,
/// the interpreter leaves what a killed lane feeds open and makes helper lanes optional voters.
#[test]
fn discard_then_derivative_and_ballot_verify() {
    for discard in ["KILL", "DEMOTE", "KILL_IF TEMP[1].wwww"] {
        let text = format!(
            "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0..1]
IMM[0] FLT32 {{0.0, 1.0, 3.0, 0.5}}
  0: SLT TEMP[1].x, IN[0].xxxx, IMM[0].xxxx
  1: MOV TEMP[1].w, -TEMP[1].xxxx
  2: IF TEMP[1].xxxx
  3:   {discard}
  4: ENDIF
  5: DDX TEMP[1].y, IN[0].zzzz
  6: DDY_FINE TEMP[1].z, IN[0].yyyy
  7: BALLOT TEMP[0], IN[0].yyyy
  8: U2F TEMP[1].x, TEMP[0].xxxx
  9: MOV OUT[0], TEMP[1]
 10: END
"
        );
        let options = tgsi2va::verify::Options { seeds: 16, ..Default::default() };
        let report = tgsi2va::verify::verify(&text, &options).unwrap_or_else(|e| panic!("{discard}: {e}"));
        assert!(report.passed(), "{discard}: {:?}", report.mismatches.first());
        assert!(report.compared > 16, "{discard}: compared {}", report.compared);
    }
}

/// gl_Layer in a fragment shader, as an input (`IN[i], LAYER`, st/mesa's form) and as a system
/// value: byte 0 of the preloaded r62, which the emulator fills from the inputs' layer (5 in the
/// interpreter's inputs, so a read of anything else mismatches).
#[test]
fn fragment_layer_reads_r62() {
    let text = "FRAG
DCL IN[0], LAYER, CONSTANT
DCL IN[1], GENERIC[0], PERSPECTIVE
DCL SV[0], LAYER
DCL OUT[0], COLOR
DCL TEMP[0]
  0: U2F TEMP[0].x, IN[0].xxxx
  1: U2F TEMP[0].y, SV[0].xxxx
  2: ADD TEMP[0].zw, IN[1].xxyy, IN[0].xxxy
  3: MOV OUT[0], TEMP[0]
  4: END
";
    let compiled = tgsi2va::compile::compile(text, &Default::default()).unwrap_or_else(|d| panic!("{:?}", d.0));
    let asm = &compiled.listings()[0].1;
    assert!(asm.contains("U8_TO_U32.discard r1, r62.b0"), "{asm}");
    let sources: Vec<(&str, &str)> =
        compiled.meta.system_values.iter().map(|s| (s.register.as_str(), s.source.as_str())).collect();
    assert_eq!(sources, [("IN[0]", "preload"), ("SV[0]", "preload")]);
    let options = tgsi2va::verify::Options { seeds: 8, ..Default::default() };
    let report = tgsi2va::verify::verify(text, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.passed(), "{:?}", report.mismatches.first());
    assert!(report.compared >= 8 * 16, "compared {}", report.compared);
}
